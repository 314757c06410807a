import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import type { DeviceCredentials, DeviceEndpoint } from '../../adapters/transport-memory/types.ts'
import { sessionKey } from '../../adapters/transport-memory/session-state.ts'
import { linkAs, memoryHarness } from './memory-harness.ts'

/**
 * A logout (operation 6) whose unlink the network did not hear of (the simulator server could not be
 * reached): docs/decisions.md keeps such a device whole, still linked, so that a retry unlinks it, as
 * Baileys does. Before, the simulated transport logged the failure, deleted the credentials and resolved.
 */
const test = suite('memory transport: a logout whose unlink fails')

class FailingLogout extends MemoryNetwork {
  failures = 1
  override async logout(deviceId: string, credentials: DeviceCredentials | undefined, endpoint?: DeviceEndpoint): Promise<void> {
    if (this.failures-- > 0) throw new Error('the simulator server cannot be reached')
    return super.logout(deviceId, credentials, endpoint)
  }
}

test('a failed unlink fails the logout and keeps the credentials; a retry unlinks the device', async () => {
  const network = new FailingLogout()
  const h = await memoryHarness({ network })
  await linkAs(h, 'dev', '5511999990000')
  const failure = await h.transport.logout('dev').then(
    () => undefined,
    (error: unknown) => error,
  )
  assert.ok(failure instanceof Error, 'the logout failed (the gateway answers 500 and keeps the device)')
  assert.ok(await h.storage.get(sessionKey('dev')), 'the credentials stay')
  assert.is(network.linkedPhone('dev'), '5511999990000', 'still linked on the network')
  await h.transport.logout('dev')
  assert.is(await h.storage.get(sessionKey('dev')), undefined)
  assert.is(network.linkedPhone('dev'), undefined, 'unlinked')
  await h.close()
})

test.run()
