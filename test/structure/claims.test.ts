import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sourceFiles } from './import-graph.ts'

const root = new URL('../..', import.meta.url).pathname
const claims = suite('one claim type, one check (src/domain/claims.ts)')

const HOME = 'src/domain/claims.ts'
const sources = sourceFiles(root, ['src', 'adapters']).map(file => ({ file, text: readFileSync(join(root, file), 'utf8') }))
const where = (pattern: RegExp) =>
  sources.flatMap(({ file, text }) => text.split('\n').flatMap((line, i) => (pattern.test(line) && file !== HOME ? [`${file}:${i + 1}: ${line.trim()}`] : [])))

claims('no claim or lease type besides Claim: no interface or type alias named *Lease or *Claim elsewhere', () => {
  assert.equal(where(/\b(interface|type)\s+\w*(Lease|Claim)s?\b\s*(<[^>]*>)?\s*[={]/), [])
})

claims('no holds-check besides claimedUntil: no leaseHolds/claimHolds, and no other function named after a claim or lease', () => {
  assert.equal(where(/\b(leaseHolds|claimHolds)\b/), [])
  assert.equal(where(/\bfunction\s+\w*(lease|claim)\w*\s*[(<]/i), [])
  assert.equal(where(/\b(private|public|static|async)?\s*(lease|claim)\w*(Holds|Held|Stands|Valid|Expired|Live)\s*\(/i), [])
})

claims('no claim expiry is compared with a clock outside the one check: no `.until >` or `until > now` elsewhere', () => {
  assert.equal(where(/\.(lease|claim)!?\??\.until\b/), [])
})

claims(
  "schedules, the outbox and device leases all judge their claims with claimedUntil (or claimedUntilConfirmed, which reads a gone owner's record before relying on it)",
  () => {
    for (const file of ['src/domain/messaging/schedule-store.ts', 'src/domain/webhooks/outbox-store.ts', 'src/domain/cluster/device-leases.ts'])
      assert.match(readFileSync(join(root, file), 'utf8'), /import \{[^}]*\bclaimedUntil(Confirmed)?\b[^}]*\} from '\.\.\/claims\.ts'/, file)
  },
)

claims.run()
