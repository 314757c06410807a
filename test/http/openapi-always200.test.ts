import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compileErrors, validate } from '@readme/openapi-parser'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { answerChecker } from '../helpers/openapi.ts'

/**
 * The OpenAPI document a gateway with `httpStatus: 'always200'` serves describes the answers it
 * gives: every answer of an operation path is HTTP 200 with its real status in the body, errors
 * included, so the document's 200 response must take an error body (and list `Retry-After`), or a
 * client generated from it, or a validating proxy, refuses the gateway's own answers.
 */

test("under always200, the gateway's answers (success, not found, refused, rate-limited) fit the OpenAPI document it serves", async () => {
  // An hour's window: windows are fixed (offset drawn from the counter's key), so the third request falls in the first two's
  // window all but once in thousands of runs (with 60 s, a dry run's crossed a window's end: 409, not 429).
  const t = await startGateway({ httpStatus: 'always200', rateLimit: { perAccount: { points: 2, duration: 3600 } } })
  try {
    const document = (await request(`${t.url}/openapi.json`)).body
    const result = await validate(structuredClone(document))
    assert.ok(result.valid, result.valid ? '' : compileErrors(result))
    const fits = await answerChecker(document)
    const { authkey } = await t.register()
    const answers = [
      await t.post('/api/developer', { authkey, message: 'loja', conecteQR: 'true' }),
      await t.post('/api/create-message', { authkey, appkey: 'nada', to: '5511988880002', message: 'oi' }),
      await t.post('/api/create-message', { authkey, appkey: 'loja', to: '5511988880002', message: 'oi' }),
      await t.post('/api/create-message', { authkey: 'x'.repeat(32), appkey: 'loja', to: '5511988880002', message: 'oi' }),
    ]
    const paths = ['/api/developer', '/api/create-message', '/api/create-message', '/api/create-message']
    assert.equal(
      answers.map(answer => [answer.status, answer.body.status]),
      [
        [200, 200],
        [200, 404],
        [200, 429],
        [200, 401],
      ],
    )
    assert.match(answers[2].headers.get('retry-after') ?? '', /^[1-9]\d*$/)
    assert.equal(
      answers.flatMap((answer, i) => fits(paths[i], answer.status, answer.body, 'post', answer.headers)),
      [],
    )
  } finally {
    await t.stop()
  }
})

test.run()
