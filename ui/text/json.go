package text

import (
	"encoding/json"
	"io"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
)

// JSONPrinter writes NDJSON: one object per line, each with a "type".
type JSONPrinter struct {
	W   io.Writer
	enc *json.Encoder
}

func (p *JSONPrinter) write(v any) {
	if p.enc == nil {
		p.enc = json.NewEncoder(p.W)
	}
	_ = p.enc.Encode(v)
}

func (p *JSONPrinter) Event(e engine.Event) {
	switch e.Kind {
	case engine.EventPhase:
		p.write(map[string]any{"type": "phase", "target": e.Target, "block": e.Block, "run": e.Index, "phase": e.Phase})
	case engine.EventProgress:
		p.write(map[string]any{"type": "progress", "target": e.Target, "rows": e.Progress.Rows, "total_rows": e.Progress.TotalRows})
	case engine.EventInterval:
		p.write(map[string]any{"type": "interval", "target": e.Target, "block": e.Block, "run": e.Index, "interval": e.Interval})
	case engine.EventRunDone:
		p.write(map[string]any{"type": "run", "run": e.Run})
	case engine.EventNotice:
		p.write(map[string]any{"type": "notice", "target": e.Target, "message": e.Message})
	}
}

func (p *JSONPrinter) Result(r *result.Result) {
	p.write(map[string]any{"type": "result", "result": r})
}
