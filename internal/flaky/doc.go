// Package flaky owns the statistics of flaky-test repair: the verdict from
// observed runs, the per-test evidence, the failure-rate interval, the rerun
// bar a fix must clear, and the JSON shape of the report. It is pure and
// deterministic: it runs nothing and reads nothing; callers feed it outcomes.
//
// # The statistics in one paragraph
//
// A test is run again and again on the same code, until it has failed 5
// times (10 if it has never passed) or the run budget ends. If it both
// passed and failed it is flaky; if it failed every time it is failing (a regression,
// handed to the normal fix path); if it never failed here it is passing
// ("CI-only"). Its failure rate is failures ÷ runs, shown with a 95% Wilson
// interval: the range of true rates that could plausibly have produced what
// we saw (3 failures in 10 runs gives 30%, interval 11%–60%). A fix is
// accepted only after a streak of clean runs so long that, had the fix
// changed nothing, such a streak would happen less than 1 time in 100: at
// least max(2 × the runs needed before the fix, ⌈4.6 ÷ the pre-fix rate⌉)
// runs, because a test that fails with rate p passes n runs in a row with
// probability (1−p)ⁿ, and (1−p)^(4.6/p) is below e^−4.6 ≈ 1%. (For rates
// below about 0.22% the ⌈4.6 ÷ rate⌉ term alone leaves up to 1.005%, so the
// exact smallest n with (1−p)ⁿ < 1% is taken when it is larger.) One failure
// after the fix fails the bar. When the run budget ends before the bar is
// reached the fix is "unproven", never "fixed". The bar trusts the measured
// pre-fix rate; a test whose true rate is lower than measured needs more
// runs than the bar asks for, so a low-rate flake should be measured with
// many runs before its fix is judged.
//
// Leaf engine: imports nothing above it.
package flaky
