const test = require('node:test');
const assert = require('node:assert');
const { cents } = require('../price.js');
test('cents pads', () => { assert.strictEqual(cents(1234), '12.34'); });
test('whole amounts', () => { assert.strictEqual(cents(500), '5.00'); });
