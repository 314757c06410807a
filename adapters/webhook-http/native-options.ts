import { checkServerIdentity } from 'node:tls'
import type { Options } from 'got'

/**
 * got@14's `Options#createNativeRequestOptions`, built without its object literal of the form
 * `{ ...cacheOptions, ...unixOptions, <30 properties> }`: on Node 20 (V8 11.3) that literal shape
 * falls off V8's fast path and costs 40 to 55 µs per request (measured: the same literal without the
 * leading spreads takes 0.5 µs), more than the rest of a keep-alive POST's client side. The result
 * has the same keys and values as got's own (a test compares them for http, https and unix-socket
 * options); HTTP/2 requests, which this sender never makes, still go through got's original.
 */
export function nativeRequestOptions(this: Options): ReturnType<Options['createNativeRequestOptions']> {
  const self = this as unknown as { _internals: any; _unixOptions?: Record<string, unknown> }
  const internals = self._internals
  if (internals.http2) return ORIGINAL.call(this)
  const { https } = internals
  const native: Record<string, unknown> = {
    ALPNProtocols: https.alpnProtocols,
    ca: https.certificateAuthority,
    cert: https.certificate,
    key: https.key,
    passphrase: https.passphrase,
    pfx: https.pfx,
    rejectUnauthorized: https.rejectUnauthorized,
    checkServerIdentity: https.checkServerIdentity ?? checkServerIdentity,
    servername: https.serverName,
    ciphers: https.ciphers,
    honorCipherOrder: https.honorCipherOrder,
    minVersion: https.minVersion,
    maxVersion: https.maxVersion,
    sigalgs: https.signatureAlgorithms,
    sessionTimeout: https.tlsSessionLifetime,
    dhparam: https.dhparam,
    ecdhCurve: https.ecdhCurve,
    crl: https.certificateRevocationLists,
    secureOptions: https.secureOptions,
    lookup: internals.dnsLookup ?? internals.dnsCache?.lookup,
    family: internals.dnsLookupIpVersion,
    agent: internals.url?.protocol === 'https:' ? internals.agent.https : internals.agent.http,
    setHost: internals.setHost,
    method: internals.method,
    maxHeaderSize: internals.maxHeaderSize,
    localAddress: internals.localAddress,
    headers: internals.headers,
    createConnection: internals.createConnection,
    timeout: undefined,
    h2session: internals.h2session,
  }
  // In got's literal the spread objects come first, so the named properties above win over them.
  for (const extra of [internals.cacheOptions, self._unixOptions]) {
    if (extra) for (const key of Object.keys(extra)) if (!Object.hasOwn(native, key)) native[key] = extra[key]
  }
  return native as ReturnType<Options['createNativeRequestOptions']>
}

/**
 * A got `beforeRequest` hook that gives the request's Options the method above; got calls
 * `createNativeRequestOptions` right after its beforeRequest hooks.
 */
export function useNativeRequestOptions(options: object): void {
  ;(options as { createNativeRequestOptions: unknown }).createNativeRequestOptions = nativeRequestOptions
}

let ORIGINAL: Options['createNativeRequestOptions']

/** Remember got's own method (for HTTP/2 and for the test that compares the two); call once got is loaded. */
export function rememberOriginal(OptionsClass: typeof Options): void {
  ORIGINAL ??= OptionsClass.prototype.createNativeRequestOptions
}
