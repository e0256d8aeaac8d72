package mysql

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	mysql "github.com/go-sql-driver/mysql"
)

// ErrorSet is --mysql-ignore-errors: server error codes that restart the
// event instead of ending the run.
type ErrorSet struct {
	All   bool
	Codes map[uint16]bool
}

// DefaultIgnoreErrors is sysbench 1.0.20's default: deadlock, record
// changed, lock wait timeout.
const DefaultIgnoreErrors = "1213,1020,1205"

// ParseErrorSet parses "all" or a comma-separated list of codes.
func ParseErrorSet(s string) (ErrorSet, error) {
	es := ErrorSet{Codes: map[uint16]bool{}}
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "all") {
		es.All = true
		return es, nil
	}
	if s == "" || strings.EqualFold(s, "none") {
		return es, nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 16)
		if err != nil {
			return es, fmt.Errorf("invalid --mysql-ignore-errors entry %q: want error codes or 'all'", f)
		}
		es.Codes[uint16(n)] = true
	}
	return es, nil
}

// Has says whether code is ignored.
func (e ErrorSet) Has(code uint16) bool { return code != 0 && (e.All || e.Codes[code]) }

func (e ErrorSet) String() string {
	if e.All {
		return "all"
	}
	var cs []int
	for c := range e.Codes {
		cs = append(cs, int(c))
	}
	sort.Ints(cs)
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// Client error codes of lost connections, as sysbench's oltp_common.lua lists them.
const (
	crServerGoneError    = 2006
	crTCPConnection      = 2011
	crServerLost         = 2013
	crServerLostExtended = 2055
)

// errorCode maps an error to a MySQL error code. Connection errors from the
// Go driver carry no code; they map to CR_SERVER_LOST (2013), as
// libmysqlclient reports a connection lost mid-query.
func errorCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	if isBrokenConn(err) {
		return crServerLost
	}
	return 0
}

func isBrokenConn(err error) bool {
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "broken pipe") ||
		strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "connection reset")
}

func isConnectionLost(code uint16, err error) bool {
	switch code {
	case crServerGoneError, crTCPConnection, crServerLost, crServerLostExtended:
		return true
	}
	return isBrokenConn(err)
}

// describeError names the error and the way to ignore it.
func describeError(code uint16, err error) error {
	if code == 0 {
		return err
	}
	if isConnectionLost(code, err) {
		return fmt.Errorf("lost the connection to the server (error %d: %v); add %d to --mysql-ignore-errors to reconnect instead", code, err, code)
	}
	return fmt.Errorf("error %d: %v (not in --mysql-ignore-errors)", code, err)
}
