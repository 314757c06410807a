import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Transport, TransportContext } from '../../src/ports/transport.ts'
import { transportContract } from '../../src/testing/transport-contract.ts'
import { memoryHarness } from '../adapters/memory-harness.ts'
import { contractCases, failingCases } from '../helpers/contract-cases.ts'

/** What a broken transport changes: the members it does its own way, given the right one (the memory transport). */
type Breakage = (right: Transport) => Partial<Transport>

/** The memory transport but for the members `breakage` replaces (after a restart too). */
function broken(right: Transport, breakage: Breakage): Transport {
  const own: Transport = {
    start: context => right.start(context),
    connect: deviceId => right.connect(deviceId),
    link: (deviceId, request) => right.link(deviceId, request),
    status: deviceId => right.status(deviceId),
    logout: (deviceId, signal) => right.logout(deviceId, signal),
    disconnect: deviceId => right.disconnect(deviceId),
    send: (deviceId, to, message) => right.send(deviceId, to, message),
    markRead: (deviceId, target) => right.markRead(deviceId, target),
    groupInfo: (deviceId, group) => right.groupInfo(deviceId, group),
    groupCreate: (deviceId, subject, participants) => right.groupCreate(deviceId, subject, participants),
    groupJoin: (deviceId, invite) => right.groupJoin(deviceId, invite),
    stop: () => right.stop(),
  }
  return Object.assign(own, breakage(right))
}

/** The cases of the transport contract named with `part`, run on the memory network with `breakage`: those it fails. */
function failedBy(breakage: Breakage, part: string): Promise<string[]> {
  const harness = async () => {
    const h = await memoryHarness()
    await h.transport.stop()
    const restart = h.restart
    const swap = async () => {
      await h.transport.stop()
      h.transport = broken(h.transport, breakage) as typeof h.transport
      await h.transport.start(h.context)
    }
    h.restart = async () => (await restart(), await swap())
    await swap()
    return h
  }
  return failingCases(contractCases(test => transportContract(test, harness, { validatesTargets: true }), part))
}

const bites = suite('zapgate/testing: the transport contract fails a broken transport')

bites('the memory transport itself passes the cases these tests run', async () => {
  assert.deepEqual(await failedBy(() => ({}), 'status'), [])
})

bites('a transport whose status events can arrive out of order (a linking emitted late, after the open)', async () => {
  const lateUnlessOpen: Breakage = right => ({
    start: (context: TransportContext) =>
      right.start({
        ...context,
        // Each status is emitted once something else resolves; only the open one goes at once, so it can overtake the one before it.
        emit: async event => {
          if (event.type !== 'status' || event.status.state === 'open') return context.emit(event)
          setTimeout(() => void context.emit(event), 5)
        },
      }),
  })
  assert.notDeepEqual(await failedBy(lateUnlessOpen, 'status'), [], "the contract's status cases all passed it")
})

bites.run()
