import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { extractLinks } from '../../src/posts/rules/links';
import { parseScheduleAt } from '../../src/posts/rules/schedule';
import { xWeightedLength } from '../../src/posts/rules/x-weighted-length';

const instants = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true });

describe('posts rules: properties', () => {
  it('an instant written with Z or any whole-minute offset parses back to itself', () => {
    fc.assert(
      fc.property(instants, fc.integer({ min: -14 * 60, max: 14 * 60 }), (date, offsetMinutes) => {
        const written = DateTime.fromJSDate(date, { zone: 'UTC' }).setZone(`UTC${offsetMinutes >= 0 ? '+' : '-'}${Math.floor(Math.abs(offsetMinutes) / 60)}:${String(Math.abs(offsetMinutes) % 60).padStart(2, '0')}`);
        const parsed = parseScheduleAt({ scheduleAt: written.toISO() ?? '' });
        assert.ok(parsed.ok);
        assert.equal(parsed.instant.getTime(), date.getTime());
      }),
    );
  });

  it('a local time that exists in a zone reads back as the same wall time there', () => {
    const zones = fc.constantFrom('Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'America/Sao_Paulo');
    fc.assert(
      fc.property(instants, zones, (date, zone) => {
        const wall = DateTime.fromJSDate(date, { zone }).startOf('minute');
        const text = wall.toFormat("yyyy-LL-dd'T'HH:mm");
        const parsed = parseScheduleAt({ scheduleAt: text, timezone: zone });
        assert.ok(parsed.ok, text);
        assert.equal(DateTime.fromJSDate(parsed.instant, { zone }).toFormat("yyyy-LL-dd'T'HH:mm"), text);
      }),
    );
  });

  it('text with no link, emoji or character beyond U+10FF weighs its length on X', () => {
    const plain = fc.string({ unit: fc.constantFrom(...'abc xyz.,!?-_ÄÖÜéçñ0123456789'.split('')), maxLength: 400 });
    fc.assert(
      fc.property(plain, (text) => {
        fc.pre(extractLinks(text).length === 0);
        assert.equal(xWeightedLength(text), [...text.normalize('NFC')].length);
      }),
    );
  });

  it('any http(s) URL ending as X ends links weighs 23 on X', () => {
    fc.assert(
      fc.property(fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }), (url) => {
        fc.pre(/^https?:\/\/[a-z0-9.-]+\.[a-z]{2,}/i.test(url) && /[a-z0-9=_#/+\-&]$/i.test(url));
        assert.equal(xWeightedLength(`a ${url} b`), 2 + 23 + 2);
      }),
    );
  });
});
