package existing

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	_ "github.com/dbduel/dbduel/engine/driver/mysql" // the protocol under test
	"github.com/dbduel/dbduel/targets"
)

// A port that accepts and then closes, or answers in another protocol, gets
// a message naming the cause instead of the driver's "invalid connection".
func TestConnectErrorNamesAMissingHandshake(t *testing.T) {
	for _, greeting := range []string{"", "HTTP/1.1 400 Bad Request\r\n\r\n"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte(greeting))
				c.Close()
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = driver.EnsureDatabase(ctx, targets.Endpoint{Protocol: "mysql", Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, User: "root", DB: "sbtest"})
		cancel()
		ln.Close()
		if err == nil || !strings.Contains(err.Error(), "without a MySQL handshake") || strings.Contains(err.Error(), "invalid connection") {
			t.Errorf("greeting %q: want the missing-handshake message, got %v", greeting, err)
		}
	}
}
