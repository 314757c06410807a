import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { assertLimited, proxiedGateway } from '../helpers/rate-limit.ts'

/**
 * Per-IP limits and IPv6: a client holds a whole /64 (one home line, one cloud VM) and picks any of
 * its 2^64 addresses per request. Counted per address, the per-IP limits (registrations: scrypt
 * costs; failed authkeys: key spraying) never fill. They count per /64, and an IPv4 client seen
 * through a dual-stack socket (::ffff:a.b.c.d) as its IPv4 address.
 */
const test = suite('per-IP limits: one IPv6 /64 is one client')

const register = (n: number) => ({
  auth: 'registrar',
  nome: 'X',
  email: `v6.${n}.${process.pid}@example.com`,
  senha: 'segredo1',
  telefone: '5511912345678',
  plano: '1',
})

test('registrations from addresses of one /64 share the limit; another /64 has its own', async () => {
  const g = await proxiedGateway({ rateLimit: { registrations: { points: 2, duration: 3600 } } })
  try {
    assert.is((await g.from('2001:db8:1:2::1', '/api/auth', register(1))).status, 200)
    assert.is((await g.from('2001:db8:1:2::2', '/api/auth', register(2))).status, 200)
    assertLimited(await g.from('2001:db8:1:2:ffff:abcd:0:3', '/api/auth', register(3)), 3600)
    assertLimited(await g.from('2001:0db8:0001:0002:0000:0000:0000:0004', '/api/auth', register(4)), 3600)
    assert.is((await g.from('2001:db8:1:3::1', '/api/auth', register(5))).status, 200, 'another /64')
  } finally {
    await g.stop()
  }
})

test('failed authkeys from one /64 count together against authFailuresPerIp', async () => {
  const g = await proxiedGateway({ rateLimit: { authFailuresPerIp: { points: 3, duration: 900 } } })
  try {
    for (let i = 1; i <= 3; i++) assert.is((await g.status(`2001:db8:9:9::${i}`, `wrong-key-${i}`)).status, 401)
    assertLimited(await g.status('2001:db8:9:9::99', 'wrong-key-4'), 900)
  } finally {
    await g.stop()
  }
})

test('an IPv4 client counts the same written as ::ffff:a.b.c.d', async () => {
  const g = await proxiedGateway({ rateLimit: { registrations: { points: 1, duration: 3600 } } })
  try {
    assert.is((await g.from('203.0.113.7', '/api/auth', register(6))).status, 200)
    assertLimited(await g.from('::ffff:203.0.113.7', '/api/auth', register(7)), 3600)
  } finally {
    await g.stop()
  }
})

test('an address a proxy wrote with its port (Azure: a.b.c.d:port, [v6]:port) counts as the address, not per connection', async () => {
  const g = await proxiedGateway({ rateLimit: { registrations: { points: 1, duration: 3600 } } })
  try {
    assert.is((await g.from('203.0.113.9:1111', '/api/auth', register(8))).status, 200)
    assertLimited(await g.from('203.0.113.9:2222', '/api/auth', register(9)), 3600)
    assert.is((await g.from('[2001:db8:7:7::1]:443', '/api/auth', register(10))).status, 200)
    assertLimited(await g.from('2001:db8:7:7::2', '/api/auth', register(11)), 3600)
  } finally {
    await g.stop()
  }
})

test.run()
