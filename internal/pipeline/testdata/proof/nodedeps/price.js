const pad = require('padder');
// cents renders an amount in cents as "D.CC".
function cents(n) { return Math.floor(n / 100) + '.' + pad(n % 10, 2); }
module.exports = { cents };
