// Appends COUNT messages to an inbox the way Claude Code 2.1.45 does: take the lock with
// proper-lockfile (a `<inbox>.lock` directory), read the JSON array, push, write, release.
// Usage: node append.js INBOX FROM COUNT PREFIX
'use strict';
const fs = require('fs');
const lockfile = require('proper-lockfile');

const [inbox, from, countText, prefix] = process.argv.slice(2);
const count = Number(countText);
if (!inbox || !from || !Number.isInteger(count) || !prefix) {
  console.error('usage: node append.js INBOX FROM COUNT PREFIX');
  process.exit(2);
}

async function appendOne(i) {
  try {
    fs.writeFileSync(inbox, '[]', { flag: 'wx' });
  } catch (e) {
    if (e.code !== 'EEXIST') throw e;
  }
  const release = await lockfile.lock(inbox, {
    lockfilePath: inbox + '.lock',
    retries: { retries: 1000, minTimeout: 5, maxTimeout: 50 },
    stale: 10000,
  });
  try {
    const entries = JSON.parse(fs.readFileSync(inbox, 'utf8'));
    entries.push({
      from,
      text: `${prefix}-${i}`,
      timestamp: new Date().toISOString(),
      read: false,
    });
    fs.writeFileSync(inbox, JSON.stringify(entries, null, 2));
  } finally {
    await release();
  }
}

(async () => {
  for (let i = 0; i < count; i++) {
    await appendOne(i);
  }
})().catch((e) => {
  console.error(`append.js: ${e.message}`);
  process.exit(1);
});
