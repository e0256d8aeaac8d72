package sys

import "github.com/dbduel/dbduel/engine/workload/sbrand"

type sbrandRand = sbrand.Rand

func newRand(seed uint64) *sbrand.Rand { return sbrand.New(sbrand.DefaultParams(), seed) }
