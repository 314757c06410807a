import { EventEmitter } from 'node:events'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { deviceBalancer } from '../../../src/domain/cluster/device-balancer.ts'
import type { DeviceLeases } from '../../../src/domain/cluster/device-leases.ts'
import type { Devices } from '../../../src/domain/devices.ts'
import type { Instances } from '../../../src/domain/instances.ts'
import { silentLogger } from '../../../src/logger.ts'

/**
 * A scan for the devices nobody holds that fails (the store did not answer) is tried again at the
 * next heartbeat, as its log line says: the departure that asked for it is told once, so the devices
 * of a gone instance would otherwise wait for the 30 s rescan (docs/scaling.md, "Failover").
 */
const test = suite('device balancer: a failed scan is tried again; a device being deleted is never opened')

test('a departure whose scan fails: the next heartbeat scans again and the orphan is taken', async () => {
  const events = new EventEmitter()
  const departures: ((gone: string[]) => void)[] = []
  const instances = {
    events,
    view: { onDeparture: (listener: (gone: string[]) => void) => departures.push(listener), onLeaving: () => {}, liveRecords: [{ id: 'me' }] },
  } as unknown as Instances
  let failing = true
  const opened: string[] = []
  const leases = {
    me: 'me',
    count: 0,
    hasRoom: true,
    verify: async () => {
      if (failing) throw new Error('the store does not answer')
    },
    reconcile: async () => {},
    holds: () => false,
    holder: async () => undefined,
    namesMe: async () => false,
    open: async (deviceId: string) => (opened.push(deviceId), true),
  } as unknown as DeviceLeases
  const devices = {
    all: async function* () {
      yield { id: 'd1', linked: true }
    },
  } as unknown as Devices
  const balancer = deviceBalancer(leases, instances, devices, 50, silentLogger)
  await balancer.start() // the start scan goes through: nothing failing yet
  opened.length = 0
  failing = true
  for (const listener of departures) listener(['gone-instance'])
  await new Promise(resolve => setTimeout(resolve, 20))
  assert.equal(opened, [], 'the scan failed')
  failing = false
  events.emit('beat')
  await new Promise(resolve => setTimeout(resolve, 20))
  assert.equal(opened, ['d1'], 'the next heartbeat scanned again')
  balancer.stop()
})

test('a linked device whose deletion was cut short (marked removing) is never opened: not at start, not by the reconcile', async () => {
  const events = new EventEmitter()
  const instances = { events, view: { onDeparture: () => {}, onLeaving: () => {}, liveRecords: [{ id: 'me' }] } } as unknown as Instances
  const opened: string[] = []
  const reopenable: string[] = []
  const leases = {
    me: 'me',
    count: 0,
    hasRoom: true,
    verify: async () => {},
    reconcile: async (live: (deviceId: string) => Promise<boolean>) => {
      for (const id of ['d1', 'd2']) if (await live(id)) reopenable.push(id)
    },
    holds: () => false,
    holder: async () => undefined,
    namesMe: async () => false,
    open: async (deviceId: string) => (opened.push(deviceId), true),
  } as unknown as DeviceLeases
  const records = { d1: { id: 'd1', linked: true }, d2: { id: 'd2', linked: true, removing: true } }
  const devices = {
    all: async function* () {
      yield* Object.values(records)
    },
    get: async (id: keyof typeof records) => records[id],
  } as unknown as Devices
  const balancer = deviceBalancer(leases, instances, devices, 50, silentLogger)
  await balancer.start()
  assert.equal(opened, ['d1'], 'only the device not being deleted was opened')
  events.emit('beat')
  await new Promise(resolve => setTimeout(resolve, 20))
  assert.equal(reopenable, ['d1'], 'the reconcile reopens only the device not being deleted')
  balancer.stop()
})

test.run()
