package provider

// NetFailure says what kind of network failure a KindTransport error was,
// so that a client and an operator learn why a provider could not be
// reached (nothing listens there, its name does not resolve, its
// certificate is not trusted, it does not answer) without reading logs.
// The HTTP layer (internal/provider/httpx) decides it from the error's
// chain; it never carries an address, a URL or anything else the provider
// entry's configuration holds.
type NetFailure uint8

// Kinds of transport failure.
const (
	// NetUnknown: a transport failure of another kind, or not
	// known.
	NetUnknown NetFailure = iota
	// NetRefused: the connection was refused: nothing listens at
	// the provider's address (or a firewall rejects it).
	NetRefused
	// NetDNS: the provider's host name did not resolve.
	NetDNS
	// NetTLS: the TLS handshake failed: the provider's certificate
	// is not trusted or not for its host name, or the two sides share no
	// protocol.
	NetTLS
	// NetTimeout: connecting, or waiting for the provider's answer,
	// took longer than the provider's transport timeouts or the
	// attempt's timeout allow.
	NetTimeout
	// NetReset: the provider (or something on the way) reset or
	// closed the connection.
	NetReset
	// NetCut: the connection held, but the provider's stream ended
	// in the middle of a line or an event, or without its terminator.
	NetCut
)

// String returns the kind's snake_case name, as ErrorInfo metadata
// (`transport_failure`) and logs give it.
func (t NetFailure) String() string {
	switch t {
	case NetRefused:
		return "connection_refused"
	case NetDNS:
		return "dns"
	case NetTLS:
		return "tls"
	case NetTimeout:
		return "timeout"
	case NetReset:
		return "connection_reset"
	case NetCut:
		return "stream_cut"
	}
	return "unknown"
}

// Describe says in words what happened, for a status message: it
// completes "provider "x" ...".
func (t NetFailure) Describe() string {
	switch t {
	case NetRefused:
		return "could not be reached: connection refused (nothing listens at its address)"
	case NetDNS:
		return "could not be reached: its host name does not resolve (DNS)"
	case NetTLS:
		return "could not be reached: the TLS handshake failed (certificate not trusted or not for its host, or no common protocol)"
	case NetTimeout:
		return "did not answer in time (a connect, response or attempt timeout)"
	case NetReset:
		return "dropped the connection (reset or closed)"
	case NetCut:
		return "cut its stream short (in the middle of an event, or before its terminator)"
	}
	return "could not be reached or its stream broke"
}
