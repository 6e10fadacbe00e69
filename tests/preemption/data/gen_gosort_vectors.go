// Generates gosort_vectors.json: `go run gen_gosort_vectors.go > gosort_vectors.json` with
// the Go kube-scheduler v1.35 is built with (its sort package's xorshift is 13/7/17; Go 1.19's
// was 13/17/5 — the vectors were made with 1.19's sort package patched to 13/7/17). The JSON written here was then compacted to [priority, start]
// pairs: items[i] = [prio, start], start -1 = no status.startTime.
package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
)

type item struct {
	ID    int   `json:"id"`
	Prio  int   `json:"prio"`
	Start int64 `json:"start"` // -1: none (time.Now() upstream)
}

type vec struct {
	Items []item `json:"items"`
	Out   []int  `json:"out"`
}

func main() {
	r := rand.New(rand.NewSource(7))
	var out []vec
	sizes := []int{1, 2, 3, 5, 8, 12, 13, 17, 25, 40, 49, 50, 51, 64, 80, 100, 130}
	for _, n := range sizes {
		for rep := 0; rep < 6; rep++ {
			items := make([]item, n)
			for i := range items {
				st := int64(-1)
				if rep%3 == 1 && r.Intn(2) == 0 {
					st = int64(r.Intn(4))
				}
				if rep%3 == 2 {
					st = int64(r.Intn(3))
				}
				items[i] = item{ID: i, Prio: []int{0, 10, 100, 5000}[r.Intn(1+rep%4)], Start: st}
			}
			in := append([]item(nil), items...)
			sort.Slice(items, func(i, j int) bool {
				a, b := items[i], items[j]
				if a.Prio != b.Prio {
					return a.Prio > b.Prio
				}
				if a.Start < 0 {
					return b.Start < 0
				}
				if b.Start < 0 {
					return true
				}
				return a.Start < b.Start
			})
			ids := make([]int, n)
			for i := range items {
				ids[i] = items[i].ID
			}
			out = append(out, vec{Items: in, Out: ids})
		}
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
