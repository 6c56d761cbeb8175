package servertest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a TCP proxy on a free loopback port in front of a server, for
// tests that cut a client's connection at a chosen moment, as a flaky
// network, a restarting sidecar or a proxy would: Cut closes every
// connection open through it, both ways, at once; it keeps accepting new
// ones, which SetTarget may send to another server, as a load balancer
// sends a reconnecting client to another replica.
type Proxy struct {
	lis net.Listener

	mu     sync.Mutex
	target string
	conns  []net.Conn
	// accepted counts the client connections accepted.
	accepted int
	wg       sync.WaitGroup
}

// StartProxy starts a Proxy to target (host:port); cleanup closes it.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("servertest: proxy listen: %v", err)
	}
	p := &Proxy{lis: lis, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Addr is the address clients dial.
func (p *Proxy) Addr() string { return p.lis.Addr().String() }

// Accepted returns how many client connections the proxy accepted.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.accepted++
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// SetTarget sends the connections accepted from now on to target.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

// Cut closes every connection open through the proxy, without a goodbye:
// both ends see their connection drop.
func (p *Proxy) Cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as a dead network path ends
		}
		c.Close()
	}
}

// Close stops the proxy and cuts its connections.
func (p *Proxy) Close() {
	p.lis.Close()
	p.Cut()
	p.wg.Wait()
}
