import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { messageId, parseAddress } from '../../adapters/transport-memory/addresses.ts'

const test = suite('transport-memory: addresses and message ids')

// The network's own forms are taken as they are, every other spelling is normalised: both must read alike.
test('an address reads the same in the network’s own form and in any other spelling', () => {
  const cases: [unknown, ReturnType<typeof parseAddress>][] = [
    ['5511988887777', { kind: 'phone', phone: '5511988887777' }],
    ['+55 (11) 98888-7777', { kind: 'phone', phone: '5511988887777' }],
    [' 5511988887777\n', { kind: 'phone', phone: '5511988887777' }],
    ['5511988887777@s.whatsapp.net', { kind: 'phone', phone: '5511988887777' }],
    ['5511988887777:12@C.US', { kind: 'phone', phone: '5511988887777' }],
    ['12345', { kind: 'phone', phone: '12345' }],
    ['1'.repeat(20), { kind: 'phone', phone: '1'.repeat(20) }],
    ['1'.repeat(21), undefined],
    ['1234', undefined],
    ['120363000000000001@g.us', { kind: 'group', id: '120363000000000001@g.us' }],
    ['5511988887777-1600000000@g.us', { kind: 'group', id: '5511988887777-1600000000@g.us' }],
    [' 120363000000000001@G.US ', { kind: 'group', id: '120363000000000001@g.us' }],
    [`${'1'.repeat(31)}@g.us`, undefined],
    ['120363000000000001-123@g.us', undefined],
    ['123456789012345@lid', { kind: 'lid', lid: '123456789012345@lid' }],
    ['123456789012345:3@LID', { kind: 'lid', lid: '123456789012345@lid' }],
    ['1234@lid', undefined],
    ['123456789012345@lid\n', { kind: 'lid', lid: '123456789012345@lid' }],
    ['5511988887777@example.com', undefined],
    ['５５１１９８８８８７７７７', undefined],
    [5511988887777, undefined],
  ]
  for (const [input, expected] of cases) assert.deepEqual(parseAddress(input), expected, JSON.stringify(input))
})

test('message ids are 3EB0 and 16 uppercase hex digits, each one new', () => {
  const ids = Array.from({ length: 2_000 }, messageId)
  for (const id of ids) assert.match(id, /^3EB0[0-9A-F]{16}$/)
  assert.equal(new Set(ids).size, ids.length)
  // Every hex digit turns up in every position: one missing by chance is (15/16)^2000 ≈ e^-129 likely per digit and position.
  for (let position = 4; position < 20; position++) assert.equal(new Set(ids.map(id => id[position])).size, 16, `position ${position}`)
})

test.run()
