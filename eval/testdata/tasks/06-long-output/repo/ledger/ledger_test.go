package ledger

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

// debugLines is how many trace lines the legacy test prints: about 11 MB, a multiple of 7 so the amounts cancel out.
const debugLines = 126000

func TestBalances(t *testing.T) {
	var entries []Entry
	w := bufio.NewWriter(os.Stdout)
	for i := 0; i < debugLines; i++ {
		amount := int64(i%7) - 3
		entries = append(entries, Entry{Account: fmt.Sprintf("acct-%02d", i%10), Amount: amount})
		fmt.Fprintf(w, "trace: booking %06d account acct-%02d amount %+d ......................................\n", i, i%10, amount)
	}
	w.Flush()
	var total int64
	for _, v := range Balances(entries) {
		total += v
	}
	if total != 0 {
		t.Fatalf("sum of balances = %d, want 0 (debits and credits cancel out)", total)
	}
}
