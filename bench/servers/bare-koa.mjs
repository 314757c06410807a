/**
 * The baseline of the HTTP benchmarks: a bare Koa app that parses the JSON body with koa-bodyparser
 * (as the gateway does) and answers 200 with a small JSON body. Prints `READY <port>` once listening.
 * Plain JavaScript run by `node` alone, like gateway.mjs.
 */
import Koa from 'koa'
import bodyParser from 'koa-bodyparser'

const app = new Koa()
app.use(bodyParser())
app.use(ctx => {
  const body = ctx.request.body
  ctx.body = { status: 200, message: 'ok', fields: Object.keys(body).length }
})
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address()
  process.stdout.write(`READY ${port}\n`)
})
process.once('SIGTERM', () => {
  server.close()
  server.closeAllConnections()
  process.exit(0)
})
