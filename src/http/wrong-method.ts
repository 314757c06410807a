import type Router from '@koa/router'
import { sendAnswer } from './render.ts'

/** What a method the router serves on other paths (405) or on none (501) answers, in the API's words. */
const WRONG_METHOD: Record<number, string> = { 405: 'Método não permitido.', 501: 'Método não implementado.' }

/**
 * The router's `allowedMethods()` (what `gateway.routes()` uses, and a host mounting the router calls)
 * answers its 405 and 501 as JSON `{status, message}`, as every other answer of the gateway is; its
 * `Allow` header and HTTP code kept (whatever `httpStatus` says: it is about the method, not an
 * operation). With `throw`, the router's own. Runs only on a request no route of the gateway took.
 */
export function answerWrongMethods(router: Router): void {
  const plain = router.allowedMethods.bind(router)
  router.allowedMethods = options => {
    const methods = plain(options)
    if (options?.throw) return methods
    return (ctx, next) =>
      methods(ctx, next).then(() => {
        const message = WRONG_METHOD[ctx.status]
        // The router's own answer has no body; one a later middleware gave (the host's) is left as it is.
        if (message !== undefined && ctx.body == null && ctx.response.get('Allow') !== '') sendAnswer(ctx, 'mirror', { status: ctx.status, message })
      })
  }
}
