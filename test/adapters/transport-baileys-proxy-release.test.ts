import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Agent } from 'node:http'
import { setupBaileys } from '../helpers/baileys-setup.ts'

const release = suite('Baileys transport: a device proxy agent is let go with its device')

/** Count the destroy() calls of the agent `agent` (an agent that closes its pooled tunnels). */
function watchDestroy(agent: Agent | undefined): { count: number } {
  const seen = { count: 0 }
  const destroy = agent!.destroy.bind(agent)
  agent!.destroy = () => void ((seen.count += 1), destroy())
  return seen
}

release('200 devices, each with its own proxy URL, linked and logged out: each agent is destroyed, none kept for the next device', async () => {
  const s = await setupBaileys({ proxy: deviceId => `socks5://user-${deviceId}:secret@proxy.example:1080` })
  const destroyed = []
  for (let i = 0; i < 200; i++) {
    const id = `dev-${i}`
    await s.transport.link(id, {})
    destroyed.push(watchDestroy(s.fake.current(id).config.agent))
    await s.transport.logout(id)
  }
  assert.equal(destroyed.filter(seen => seen.count === 0).length, 0, 'every logged-out device let its proxy agent (and the connections it pools) go')
  await s.transport.link('dev-0', {})
  assert.ok(s.fake.current('dev-0').config.agent !== undefined)
  await s.transport.stop()
})

release('a proxy URL shared by devices: its agent stays while one of them is left, and goes with the last', async () => {
  const s = await setupBaileys({ proxy: 'http://proxy.example:8080' })
  await s.transport.link('a', {})
  await s.transport.link('b', {})
  const agent = s.fake.current('a').config.agent
  const seen = watchDestroy(agent)
  await s.transport.logout('a')
  assert.is(seen.count, 0, 'device b still connects through it')
  await s.transport.link('c', {})
  assert.is(s.fake.current('c').config.agent, agent, 'one agent per proxy URL, shared')
  await s.transport.logout('b')
  await s.transport.logout('c')
  assert.is(seen.count, 1, 'no device left on that proxy')
  await s.transport.stop()
})

release.run()
