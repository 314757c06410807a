/**
 * zapgate/adapter-kit: what an adapter author needs beside the port types (which the main entry
 * exports). Our own adapters use exactly this, so a stranger's adapter can do whatever ours do.
 */
export { KeyedLock } from './store/keyed-lock.ts'
export { BoundedMap, putBounded } from './store/bounded-map.ts'
export { childLogger, silentLogger } from './logger.ts'
export { checkUrl, isPrivateAddress, type UrlRefusal } from './security/url-policy.ts'
export {
  guardedAgents,
  publicAddressesOnly,
  AddressRefusedError,
  type AddressPolicy,
  type LookupFunction,
  type GuardedAgentOptions,
} from './security/address-guard.ts'
export { coerceWhen, isAnything, isBoolean, isNumber, isScalar, isString, isStringOrNumber } from './schema/coerce-when.ts'
export { jsonEqual } from './store/json-equal.ts'
export { requireAtomic, supportsAtomic, atomicSteps } from './ports/storage.ts'
export { importOptional, isInstalled, requireInstalled, MissingPackageError, type PackageLookup } from './optional-package.ts'
