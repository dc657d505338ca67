package fakellm

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// OutageMessage is the error message every answer of an Outage carries.
const OutageMessage = "upstream model unavailable"

// Outage is a model endpoint that is down: every request is answered 503
// with an OpenAI-shaped error body ("server_error", OutageMessage) and a
// retry-after-ms of 1, so an adapter's retries are quick. It counts the
// requests. Close it when done.
type Outage struct {
	*httptest.Server
	n atomic.Int64
}

// NewOutage starts an endpoint that is down.
func NewOutage() *Outage {
	o := &Outage{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after-ms", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"` + OutageMessage + `","type":"server_error"}}`))
	}))
	return o
}

// BaseURL is the value for --base-url (the base-url input).
func (o *Outage) BaseURL() string { return o.URL + "/v1" }

// Requests is how many requests the endpoint has answered.
func (o *Outage) Requests() int { return int(o.n.Load()) }
