import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { formatWallClock, parseScheduleTime } from '../../../src/domain/messaging/schedule-time.ts'

const test = suite('schedule times (agendamento)')

test('parseScheduleTime reads a UTC wall-clock time', () => {
  assert.deepEqual(parseScheduleTime('2030-05-17 14:30:05', 'UTC'), { at: Date.UTC(2030, 4, 17, 14, 30, 5), text: '2030-05-17 14:30:05' })
})

test('parseScheduleTime accepts a T separator and a missing seconds field, and answers the canonical text', () => {
  assert.deepEqual(parseScheduleTime('2030-05-17T14:30', 'UTC'), { at: Date.UTC(2030, 4, 17, 14, 30, 0), text: '2030-05-17 14:30:00' })
})

test('parseScheduleTime reads the time in the given zone', () => {
  assert.equal(parseScheduleTime('2030-05-17 09:00:00', 'America/Sao_Paulo')?.at, Date.UTC(2030, 4, 17, 12, 0, 0))
  assert.equal(parseScheduleTime('2030-01-15 09:00:00', 'Europe/Lisbon')?.at, Date.UTC(2030, 0, 15, 9, 0, 0))
  assert.equal(parseScheduleTime('2030-07-15 09:00:00', 'Europe/Lisbon')?.at, Date.UTC(2030, 6, 15, 8, 0, 0))
  assert.equal(parseScheduleTime('2030-07-15 09:00:00', 'Asia/Kolkata')?.at, Date.UTC(2030, 6, 15, 3, 30, 0))
})

test('parseScheduleTime refuses impossible dates and times', () => {
  for (const text of [
    '2026-02-30 10:00:00',
    '2027-02-29 10:00:00',
    '2030-04-31 10:00:00',
    '2030-00-10 10:00:00',
    '2030-13-01 10:00:00',
    '2030-01-00 10:00:00',
    '2030-01-01 24:00:00',
    '2030-01-01 10:60:00',
    '2030-01-01 10:00:60',
  ]) {
    assert.equal(parseScheduleTime(text, 'UTC'), undefined, text)
  }
  assert.ok(parseScheduleTime('2028-02-29 10:00:00', 'UTC'), 'a leap day exists')
})

test('parseScheduleTime refuses malformed text', () => {
  for (const text of ['', 'amanhã', '2030-1-01 10:00:00', '2030-01-01', '10:00:00', '2030/01/01 10:00:00', '2030-01-01 10:00:00 extra', '2030-01-01 1:00:00']) {
    assert.equal(parseScheduleTime(text, 'UTC'), undefined, text)
  }
})

test('parseScheduleTime refuses a local time skipped by a daylight-saving change and takes the first of a repeated one', () => {
  // Europe/Lisbon: 2030-03-31 01:00 -> 02:00 (skipped hour); 2030-10-27 02:00 -> 01:00 (repeated hour).
  assert.equal(parseScheduleTime('2030-03-31 01:30:00', 'Europe/Lisbon'), undefined)
  assert.equal(parseScheduleTime('2030-10-27 01:30:00', 'Europe/Lisbon')?.at, Date.UTC(2030, 9, 27, 0, 30, 0))
})

test('parseScheduleTime takes the second occurrence of a repeated time when asked (now) during the second pass', () => {
  // Europe/Lisbon 2030-10-27: 01:30 happens at 00:30Z (WEST) and again at 01:30Z (WET); the clocks go back at 01:00Z.
  assert.equal(parseScheduleTime('2030-10-27 01:30:00', 'Europe/Lisbon', Date.UTC(2030, 9, 27, 1, 0, 0))?.at, Date.UTC(2030, 9, 27, 1, 30, 0))
  assert.equal(parseScheduleTime('2030-10-27 01:30:00', 'Europe/Lisbon', Date.UTC(2030, 9, 27, 0, 0, 0))?.at, Date.UTC(2030, 9, 27, 0, 30, 0))
  // Asked during the first pass (01:40 WEST), after the first occurrence: the first, past (refused by the caller), not the second.
  assert.equal(parseScheduleTime('2030-10-27 01:30:00', 'Europe/Lisbon', Date.UTC(2030, 9, 27, 0, 40, 0))?.at, Date.UTC(2030, 9, 27, 0, 30, 0))
  // Both past: the first (refused as past by the caller).
  assert.equal(parseScheduleTime('2030-10-27 01:30:00', 'Europe/Lisbon', Date.UTC(2030, 9, 27, 2, 0, 0))?.at, Date.UTC(2030, 9, 27, 0, 30, 0))
})

test('formatWallClock writes an instant as YYYY-MM-DD HH:MM:SS in a zone', () => {
  assert.equal(formatWallClock(Date.UTC(2030, 0, 2, 3, 4, 5), 'UTC'), '2030-01-02 03:04:05')
  assert.equal(formatWallClock(Date.UTC(2030, 0, 2, 0, 4, 5), 'America/Sao_Paulo'), '2030-01-01 21:04:05')
  assert.equal(formatWallClock(Date.UTC(2030, 0, 2, 0, 0, 0), 'UTC'), '2030-01-02 00:00:00')
})

test.run()
