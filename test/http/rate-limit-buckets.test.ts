// Guarantees: a company's bucket refills at its rate and holds at most one second's worth; the buckets forgotten
// when too many companies are tracked are the least recently seen, whether or not a company was the last one seen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompanyBuckets } from '../../src/http/rate-limit.js';
import { TestClock } from '../../src/lib/clock.js';

const TRACKED = 100_000;

test('a bucket: the rate a second, one second at most, and the wait when it holds too few', () => {
  const clock = new TestClock(1_000_000);
  const buckets = new CompanyBuckets(10, clock);
  for (let i = 0; i < 10; i++) assert.equal(buckets.take('c_a', 1), 0, `token ${i}`);
  assert.equal(buckets.take('c_a', 1), 1, 'empty: wait a second');
  assert.equal(buckets.take('c_a', 1), 1, 'seen again at once (the last seen): still empty');
  assert.equal(buckets.take('c_b', 10), 0, 'another company has its own bucket');
  clock.advanceTo(1_000_500);
  for (let i = 0; i < 5; i++) assert.equal(buckets.take('c_a', 1), 0, `refilled token ${i}`);
  assert.equal(buckets.take('c_a', 1), 1);
  clock.advanceTo(1_010_000);
  assert.equal(buckets.take('c_a', 10), 0, 'ten seconds idle: one second of tokens, no more');
  assert.equal(buckets.take('c_a', 1), 1);
});

test('past the companies tracked, the least recently seen is forgotten first', () => {
  const clock = new TestClock(1_000_000);
  const buckets = new CompanyBuckets(1, clock);
  // Every bucket emptied: a forgotten company comes back with a full one.
  for (let i = 0; i < TRACKED; i++) assert.equal(buckets.take(`c_${i}`, 1), 0);
  // c_0, the oldest, seen again (twice: the second time it is the last seen) moves to the end.
  assert.equal(buckets.take('c_0', 1), 1);
  assert.equal(buckets.take('c_0', 1), 1);
  // A new company: c_1 is now the least recently seen, and is forgotten.
  assert.equal(buckets.take('c_new', 1), 0);
  assert.equal(buckets.take('c_0', 1), 1, 'c_0 kept: its bucket still empty');
  assert.equal(buckets.take('c_1', 1), 0, 'c_1 forgotten: a full bucket again');
  // c_1 came back by forgetting c_2; the newest, seen last, is kept when the next newcomer forgets c_3.
  assert.equal(buckets.take('c_new', 1), 1);
  assert.equal(buckets.take('c_newer', 1), 0);
  assert.equal(buckets.take('c_new', 1), 1, 'the last seen kept');
  assert.equal(buckets.take('c_4', 1), 1, 'c_4 kept');
  assert.equal(buckets.take('c_3', 1), 0, 'c_3 forgotten');
});
