/**
 * The environment for running npm from a test as a user would in a terminal: without the lifecycle
 * variables npm sets when the tests run under `npm test` (`npm_config_local_prefix` would point a
 * child npm at this repository), but keeping the settings that reach the registry (a CI's mirror,
 * cache, proxy or certificates).
 */
export function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const kept = /^npm_config_(registry|cache|userconfig|globalconfig|proxy|https_proxy|noproxy|strict_ssl|cafile|ca)$/i
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || kept.test(key)))
  return { ...env, ...extra }
}
