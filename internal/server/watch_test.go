package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// sentStream is a health watch's server stream that records what was sent.
type sentStream struct {
	grpc.ServerStream
	ctx  context.Context
	mu   sync.Mutex
	sent []healthpb.HealthCheckResponse_ServingStatus
}

func (s *sentStream) Context() context.Context { return s.ctx }

func (s *sentStream) SendMsg(m any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, m.(*healthpb.HealthCheckResponse).GetStatus())
	return nil
}

// TestWatchIsToldBeforeItEnds: when the grace period begins before the
// health service got to send NOT_SERVING (a watch goroutine scheduled late,
// no drain delay), the watch is not ended until it has sent it, so the
// watcher learns of the drain instead of seeing a broken stream.
func TestWatchIsToldBeforeItEnds(t *testing.T) {
	graceful, endWatches := context.WithCancel(context.Background())
	s := &Server{gracefulStop: graceful}
	ss := &sentStream{ctx: t.Context()}
	due := make(chan struct{}) // NOT_SERVING is due: health.Shutdown ran
	done := make(chan error, 1)
	go func() {
		w := s.drainWatch(ss.Context(), ss)
		defer w.end()
		done <- func(st grpc.ServerStream) error {
			// The health service's Watch, at its worst: it sends SERVING,
			// then, once an update is due, takes the stream's end first
			// when both are ready.
			_ = st.SendMsg(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
			<-due
			select {
			case <-st.Context().Done():
				return st.Context().Err()
			case <-time.After(200 * time.Millisecond):
			}
			_ = st.SendMsg(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING})
			<-st.Context().Done()
			return st.Context().Err()
		}(w)
	}()
	endWatches()
	close(due)
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard against hangs
		t.Fatal("the watch did not end after it sent NOT_SERVING")
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	want := []healthpb.HealthCheckResponse_ServingStatus{healthpb.HealthCheckResponse_SERVING, healthpb.HealthCheckResponse_NOT_SERVING}
	if len(ss.sent) != 2 || ss.sent[1] != want[1] {
		t.Errorf("the watcher was sent %v before its stream ended, want %v", ss.sent, want)
	}
}
