package mysql

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbduel/dbduel/engine/driver"
)

// CopyRows loads rows with LOAD DATA LOCAL INFILE, streamed from the
// client: the server parses tab-separated lines instead of INSERT
// statements. Measured on MariaDB 10.11.19 with 4 loaders on 2 cores (4×250k
// rows, the same files, the server's CPU): plain, 5.3-6.3 s; with unique
// and foreign-key checks off (the empty-table bulk path of MDEV-24818,
// which sorts every index at commit) 7.5-9.1 s, and still more than plain
// with innodb_sort_buffer_size at 64M; with the k index made in CREATE
// TABLE instead of after, slower again; prepared multi-row INSERTs in the
// binary protocol about the same as plain; a CHARACTER SET clause (a
// conversion per row) slower. So none of them is used. A server that
// refuses LOCAL INFILE gives driver.ErrNoBulkLoad, and the caller loads
// with INSERTs instead.
func (d *DB) CopyRows(ctx context.Context, table string, columns []string, rows driver.RowSource) (int64, error) {
	conn, err := d.DB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var on int
	if err := conn.QueryRowContext(ctx, "SELECT @@local_infile").Scan(&on); err != nil || on == 0 {
		return 0, fmt.Errorf("%w: the server has local_infile off", driver.ErrNoBulkLoad)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "dbduel-" + hex.EncodeToString(b)
	src := &lineReader{ctx: ctx, rows: rows}
	gomysql.RegisterReaderHandler(name, func() io.Reader { return src })
	defer gomysql.DeregisterReaderHandler(name)
	q := fmt.Sprintf("LOAD DATA LOCAL INFILE 'Reader::%s' INTO TABLE `%s` "+
		"FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' (%s)", name, table, strings.Join(columns, ", "))
	_, err = conn.ExecContext(ctx, q)
	if err != nil {
		var me *gomysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1148 || me.Number == 3948 || me.Number == 4166) {
			return 0, fmt.Errorf("%w: %v", driver.ErrNoBulkLoad, err)
		}
		return src.n, err
	}
	return src.n, nil
}

// lineReader formats rows as LOAD DATA's default format (tab-separated
// fields, newline-terminated lines, backslash escapes) straight into the
// driver's packet buffer, on the driver's goroutine: no pipe, goroutine or
// second buffer between the generator and the socket (they were a quarter
// of the client's CPU, which a small machine takes from the server).
type lineReader struct {
	ctx     context.Context
	rows    driver.RowSource
	pending []byte // the rest of a line that did not fit the last buffer
	scratch []byte
	n       int64 // lines formatted
	ended   bool
}

// roomForLine is the free space below which a line is formatted aside
// and copied, so a line never has to be cut while it is formatted.
const roomForLine = 1024

func (r *lineReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	off := copy(p, r.pending)
	r.pending = r.pending[off:]
	for off < len(p) && !r.ended {
		row, ok := r.rows()
		if !ok {
			r.ended = true
			break
		}
		r.n++
		if len(p)-off >= roomForLine {
			line := appendLine(p[off:off:len(p)], row)
			if len(line) <= len(p)-off { // formatted in place
				off += len(line)
				continue
			}
			r.scratch = line // a line longer than the room: it went to a new array
		} else {
			r.scratch = appendLine(r.scratch[:0], row)
		}
		c := copy(p[off:], r.scratch)
		off += c
		r.pending = r.scratch[c:]
		break
	}
	if off == 0 && r.ended {
		return 0, io.EOF
	}
	return off, nil
}

func appendLine(b []byte, row []any) []byte {
	for i, v := range row {
		if i > 0 {
			b = append(b, '\t')
		}
		b = appendField(b, v)
	}
	return append(b, '\n')
}

func appendField(b []byte, v any) []byte {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case string:
		return appendEscaped(b, x)
	case []byte:
		return appendEscapedBytes(b, x)
	case nil:
		return append(b, `\N`...)
	}
	return appendEscaped(b, fmt.Sprint(v))
}

func appendEscapedBytes(b, s []byte) []byte {
	if needsEscape(s) {
		return appendEscaped(b, string(s))
	}
	return append(b, s...) // sysbench's values: digits and dashes
}

// needsEscape says whether s holds a backslash, tab or newline. It looks at
// eight bytes at a time (a byte-at-a-time scan was a third of the client's
// CPU in prepare): a word has a byte equal to c when (w^c…c) has a zero byte.
func needsEscape(s []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(x uint64) bool { return (x-ones)&^x&highs != 0 }
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		if hasZero(w^('\\'*ones)) || hasZero(w^('\t'*ones)) || hasZero(w^('\n'*ones)) {
			return true
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '\t' || c == '\n' {
			return true
		}
	}
	return false
}

func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '\t', '\n':
			b = append(b, '\\', c)
		default:
			b = append(b, c)
		}
	}
	return b
}
