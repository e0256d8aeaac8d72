package mysql

import "sync"

// SetIgnore changes the ignore rules of an open DB (tests only).
func (d *DB) SetIgnore(e ErrorSet) { d.ignore = e }

// ResetSchedHint makes the next Open decide on the scheduling hint again.
func ResetSchedHint() { schedHintOnce = sync.Once{} }
