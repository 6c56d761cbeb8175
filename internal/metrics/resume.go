package metrics

import "github.com/prometheus/client_golang/prometheus"

// The metrics of resumable calls (internal/resume).
const (
	// NameResumeBuffered is what this replica's resumable calls keep (their
	// events, in memory or in Redis with the redis store, and their own
	// cost), against resume.max_buffered_bytes.
	NameResumeBuffered = "llmrelay_resume_buffered_bytes"
	// NameResumeEvents counts what happens to resumable calls, by event:
	// "detached" (the client's stream went away while the call ran),
	// "resumed" (a Resume stream, or a repeated Generate, attached to a
	// call), "grace_expired" (cancelled: nobody resumed it within
	// resume.grace), "buffer_full" (its events outgrew a bound; no longer
	// resumable), "lost" (it ended RESUMABLE_CALL_LOST: cut off by this
	// replica's shutdown, or found by a reader here with its replica
	// gone).
	NameResumeEvents = "llmrelay_resume_events_total"
)

// Events of NameResumeEvents.
const (
	ResumeDetached     = "detached"
	ResumeResumed      = "resumed"
	ResumeGraceExpired = "grace_expired"
	ResumeBufferFull   = "buffer_full"
	ResumeLost         = "lost"
)

// resumeMetrics are the collectors of resumable calls.
type resumeMetrics struct {
	buffered prometheus.Gauge
	events   *prometheus.CounterVec
}

func newResumeMetrics(reg *prometheus.Registry) resumeMetrics {
	r := resumeMetrics{
		buffered: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameResumeBuffered,
			Help: "Bytes kept for resumable calls by this replica: their events and their own cost.",
		}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameResumeEvents,
			Help: "Resumable calls detached from their client, resumed, cancelled after the grace period, past the buffer bounds, or lost.",
		}, []string{"event"}),
	}
	for _, e := range []string{ResumeDetached, ResumeResumed, ResumeGraceExpired, ResumeBufferFull, ResumeLost} {
		r.events.WithLabelValues(e)
	}
	reg.MustRegister(r.buffered, r.events)
	return r
}

// ResumeBuffered records the bytes of events kept for resumable calls.
func (m *Metrics) ResumeBuffered(bytes int64) {
	if m != nil {
		m.resume.buffered.Set(float64(bytes))
	}
}

// ResumeEvent counts one event of a resumable call (ResumeDetached, ...).
func (m *Metrics) ResumeEvent(event string) {
	if m != nil {
		m.resume.events.WithLabelValues(event).Inc()
	}
}
