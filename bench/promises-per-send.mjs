/**
 * How many promises and `process.nextTick`s one text send (op 8) makes in the gateway, counted with
 * async_hooks: `node bench/promises-per-send.mjs [root]` (root: a copy of the package with its own
 * `dist/` and `bench/servers/`, as bench/compare-builds.ts takes; default this checkout, built with
 * `npm run build`). The bench gateway (bench/servers/gateway.mjs: memory store, simulated network)
 * runs in this process; one account, one linked device, then 3,000 sends to warm up and 1,000 counted,
 * one after another over one keep-alive connection by a client of callbacks (it makes no promise of
 * its own; Node's HTTP client makes the ticks of its side, counted alike in every build). Not part
 * of `npm run bench`: the count is exact, a figure to compare builds by, not a speed.
 */
import { createHook } from 'node:async_hooks'
import http from 'node:http'
import { fileURLToPath } from 'node:url'

const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url))
const COUNTED = 1_000

// The gateway server prints `READY <port>` on stdout once listening: take the port from it.
process.env.PORT = '0'
const print = process.stdout.write.bind(process.stdout)
const port = await new Promise(resolve => {
  process.stdout.write = (chunk, ...rest) => {
    const ready = /READY (\d+)/.exec(String(chunk))
    return ready ? (resolve(Number(ready[1])), true) : print(chunk, ...rest)
  }
  void import(`${root}/bench/servers/gateway.mjs`)
})
process.stdout.write = print

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
/** POST a JSON body; calls back with the parsed answer. */
function post(path, body, done) {
  const data = Buffer.from(JSON.stringify(body))
  const headers = { 'content-type': 'application/json', 'content-length': data.length }
  const request = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers }, response => {
    const chunks = []
    response.on('data', chunk => chunks.push(chunk))
    response.on('end', () => done(response.statusCode, JSON.parse(Buffer.concat(chunks).toString('utf8'))))
  })
  request.end(data)
}
const postAsync = (path, body) => new Promise(resolve => post(path, body, (status, answer) => resolve(answer)))

const registered = await postAsync('/api/auth', {
  auth: 'registrar',
  nome: 'Bench',
  email: `promises-${Date.now()}@example.com`,
  senha: 'senha-bench',
  telefone: '5511900000000',
  plano: '1',
})
const authkey = registered.data.authkey
const created = await postAsync('/api/v2/qrcode', { authkey, setAppkey: 'bench-0' })
await postAsync('/_sim/scan', { authkey, appkey: created.appkey, phone: '5511910000000' })
const send = { appkey: created.appkey, authkey, to: '5511988887777', message: 'Olá! Seu pedido 1234 saiu para entrega.' }

/** `count` sends one after another (the next once the answer has ended and its socket is free). */
function sends(count, done) {
  let left = count
  const one = () =>
    post('/api/create-message', send, status => {
      if (status !== 200) throw new Error(`a send answered ${status}`)
      if (--left > 0) setImmediate(one)
      else done()
    })
  one()
}

const counts = new Map()
let counting = false
createHook({ init: (id, type) => counting && counts.set(type, (counts.get(type) ?? 0) + 1) }).enable()
await new Promise(resolve => sends(3_000, resolve))
counting = true
await new Promise(resolve => sends(COUNTED, resolve))
counting = false
const per = type => ((counts.get(type) ?? 0) / COUNTED).toFixed(2)
console.log(`per send (${COUNTED} sends): ${per('PROMISE')} promises, ${per('TickObject')} process.nextTick`)
process.exit(0)
