// Package capool reads the PEM bundles of certificate authorities that
// llmrelay's settings name (`ca_file`: a provider's transport, Redis, an
// MCP server), so that each is read and checked the same way.
package capool

import (
	"crypto/x509"
	"fmt"
	"os"
)

// Read reads the PEM bundle in file: the pool of its certificates, and
// the bundle's bytes (to tell, on a reload, whether it changed). The
// error is os.ReadFile's, or says that the file holds no PEM certificate.
func Read(file string) (*x509.CertPool, []byte, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, pem, nil
}
