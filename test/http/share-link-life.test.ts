import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor, withGateway } from '../helpers/gateway.ts'
import { inProcessCluster, registerAt } from '../helpers/cluster-in-process.ts'
import { post, request } from '../helpers/http.ts'

const GONE = { status: 404, message: 'Link inválido, expirado ou excluído.' }

/** The page and its feed of a share link: [page status, feed status, what the feed says] (the share-page suite checks the feed has nothing more). */
async function shown(link: string): Promise<[number, number, unknown]> {
  const [page, state] = [await request(link), await request(`${link}/state`)]
  return [page.status, state.status, state.status === 200 ? { conectado: state.body.conectado, qrcode: state.body.qrcode } : state.body]
}

test('a share link answers 404 once shareLinkTtlMs has passed (the page and its feed, never a 500)', () =>
  withGateway({ shareLinkTtlMs: 1500 }, async t => {
    const { authkey } = await t.register()
    const answer = await t.post('/api/developer', { authkey, message: 'vitrine', conecteQR: 'true' })
    assert.equal(await shown(answer.body.link), [200, 200, { conectado: false, qrcode: answer.body.qrcode }], 'a fresh link shows the QR')
    await waitFor(async () => (await request(answer.body.link)).status !== 200, 10_000, 'the link to expire')
    assert.equal(await shown(answer.body.link), [404, 404, GONE])
    const html = await request(answer.body.link)
    assert.match(html.headers.get('content-type') ?? '', /text\/html/)
    assert.ok(html.text.includes('Link inválido, expirado ou excluído.'), 'the page says the link expired')
    const again = await t.post('/api/developer', { authkey, message: 'vitrine', conecteQR: 'true' })
    assert.is((await request(again.body.link)).status, 200, 'operation 4 hands out a new link')
  }))

test('once its device has connected a link never shows a QR again: it says connected, and answers 404 once the device is logged out', async () => {
  const t = await startGateway()
  try {
    const { authkey } = await t.register()
    const answer = await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true' })
    await t.network.scan({ deviceId: answer.body.id }, '5511933334444')
    await waitFor(async () => (await t.post('/api/developer', { authkey, message: 'balcao', checkDispositivo: 'true' })).body.dispositivo?.conectado === true)
    assert.equal(await shown(answer.body.link), [200, 200, { conectado: true, qrcode: null }])

    // The phone removes the device: the link holder must not be offered a QR that links the device to another phone.
    await t.network.unlink(answer.body.id)
    await waitFor(async () => (await internalsOf(t.gateway).devices.get(answer.body.id))?.linked === false)
    assert.equal(await shown(answer.body.link), [404, 404, GONE])
    assert.is(await internalsOf(t.gateway).links.currentQr(answer.body.id), undefined, 'no new link was started by the page')
    const again = await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true' })
    assert.equal((await shown(again.body.link))[2], { conectado: false, qrcode: again.body.qrcode }, 'a new link shows the new QR')
  } finally {
    await t.stop()
  }
})

test('a link lives as long as the instance that made it said, on every instance of a cluster whatever their own shareLinkTtlMs', async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, index => ({ transport: memoryTransport({ network }), shareLinkTtlMs: index === 0 ? 1500 : 3_600_000 }))
  try {
    const authkey = await registerAt(members[0]!.url, 'share-life@example.com')
    const short = await post(`${members[0]!.url}/api/developer`, { authkey, message: 'curto', conecteQR: 'true' })
    const long = await post(`${members[1]!.url}/api/developer`, { authkey, message: 'longo', conecteQR: 'true' })
    const paths = [short, long].map(answer => new URL(answer.body.link).pathname)
    for (const member of members) for (const path of paths) assert.is((await request(member.url + path)).status, 200, `${path} at first`)
    await waitFor(async () => (await request(members[1]!.url + paths[0])).status === 404, 10_000, 'the short link to expire')
    for (const member of members) {
      assert.equal(await shown(member.url + paths[0]), [404, 404, GONE], 'the 1.5 s link is gone everywhere')
      assert.is((await request(`${member.url}${paths[1]}/state`)).status, 200, 'the 1 h link still works, even where the option says 1.5 s')
    }
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
