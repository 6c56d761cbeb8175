// Command cutproxy is a TCP proxy that drops the first connection in the
// middle: it forwards the first connection until the server has sent it
// -cut-after bytes, then closes it both ways at once, as a flaky network or
// a restarting proxy would; later connections go through untouched.
// scripts/test-clients.sh puts it between the resume examples and llmrelay.
//
//	go run ./internal/tools/cutproxy -target 127.0.0.1:50051 -cut-after 600
//
// It prints "cutproxy listening on ADDR" once it listens (and, with
// -addr-file, writes ADDR to that file, whole or not at all, for a script
// to wait on), and "cutproxy cut a connection after N bytes" when it cuts.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync/atomic"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	target := flag.String("target", "", "address to forward to (required)")
	cutAfter := flag.Int64("cut-after", 600, "bytes from the server after which the first connection is cut")
	addrFile := flag.String("addr-file", "", "write the address it listens on to this file once it listens")
	flag.Parse()
	if *target == "" {
		fmt.Fprintln(os.Stderr, "cutproxy: -target is required")
		os.Exit(2)
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("cutproxy listening on %s\n", lis.Addr())
	if *addrFile != "" {
		// Written aside and renamed, so that a reader sees all of it or no file.
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(lis.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			log.Fatal(err)
		}
	}
	var first atomic.Bool
	first.Store(true)
	for {
		c, err := lis.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c, *target, first.Swap(false), *cutAfter)
	}
}

// serve forwards c to target; with cut, it cuts both once the server has
// sent limit bytes.
func serve(c net.Conn, target string, cut bool, limit int64) {
	up, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	closeBoth := func() {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as a dead path ends
		}
		c.Close()
		up.Close()
	}
	go func() {
		_, _ = io.Copy(up, c)
		closeBoth()
	}()
	if !cut {
		_, _ = io.Copy(c, up)
		closeBoth()
		return
	}
	n, _ := io.CopyN(c, up, limit)
	closeBoth()
	if n == limit {
		fmt.Printf("cutproxy cut a connection after %d bytes\n", n)
	}
}
