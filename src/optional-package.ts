/**
 * Optional peer packages (Baileys, prom-client, swagger-ui-dist, the store drivers): a host installs
 * only those of the features it uses, and a missing one fails with a message naming what to install.
 */

/** A feature needs an optional package that is not installed; the message says what to install. */
export class MissingPackageError extends Error {
  constructor(
    /** The package to install, e.g. `prom-client`. */
    readonly packageName: string,
    /** What needs it, e.g. `the metrics option`. */
    readonly feature: string,
    /** The install command, e.g. `npm install prom-client@^15`. */
    readonly install: string,
    options?: ErrorOptions,
  ) {
    super(`${feature} needs the optional package ${packageName}, which is not installed: run ${install}`, options)
    this.name = 'MissingPackageError'
  }
}

/**
 * Load an optional package through `load` (a literal `import('name')`, so bundlers and types see it);
 * when the package itself cannot be found, throw a MissingPackageError naming it. Any other failure
 * (a broken install, an error inside the package) is thrown as it is.
 */
export async function importOptional<M>(packageName: string, feature: string, load: () => Promise<M>, range?: string): Promise<M> {
  try {
    return await load()
  } catch (cause) {
    if (isNotFound(cause, packageName)) throw missingPackage(packageName, feature, range, cause)
    throw cause
  }
}

/** How a package is looked for: `resolve` is the caller's `import.meta.resolve` (default: zapgate's own). */
export interface PackageLookup {
  /** The version range the install command names, e.g. `^15`. */
  range?: string
  /** Resolve a specifier from the caller's module: pass `import.meta.resolve`. */
  resolve?: (specifier: string) => string
}

/** Whether `packageName` can be found (from zapgate, or from the caller given `resolve`), without loading it. */
export function isInstalled(packageName: string, resolve: (specifier: string) => string = import.meta.resolve): boolean {
  try {
    resolve(packageName)
    return true
  } catch {
    return false
  }
}

/** Throw a MissingPackageError unless `packageName` can be found: a check at start-up, before first use. */
export function requireInstalled(packageName: string, feature: string, lookup: PackageLookup = {}): void {
  if (!isInstalled(packageName, lookup.resolve)) throw missingPackage(packageName, feature, lookup.range)
}

// --- Internal helpers ---

function missingPackage(packageName: string, feature: string, range?: string, cause?: unknown): MissingPackageError {
  return new MissingPackageError(packageName, feature, `npm install ${packageName}${range ? `@${range}` : ''}`, cause === undefined ? undefined : { cause })
}

/** Whether `error` says that `packageName` itself (not something inside it) cannot be found. */
function isNotFound(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  return typeof message === 'string' && (message.includes(`'${packageName}'`) || message.includes(`'${packageName}/`))
}
