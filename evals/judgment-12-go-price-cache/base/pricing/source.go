// Package pricing serves product prices from the upstream catalogue.
package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Price of one SKU in cents.
type Price struct {
	SKU   string `json:"sku"`
	Cents int64  `json:"cents"`
}

// Source fetches prices from the catalogue service.
type Source struct {
	BaseURL string
	Client  *http.Client
}

// NewSource returns a Source with a 5 s HTTP timeout.
func NewSource(baseURL string) *Source {
	return &Source{BaseURL: baseURL, Client: &http.Client{Timeout: 5 * time.Second}}
}

// Fetch returns the current price of sku.
func (s *Source) Fetch(ctx context.Context, sku string) (Price, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.BaseURL+"/prices/"+sku, nil)
	if err != nil {
		return Price{}, err
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return Price{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Price{}, fmt.Errorf("catalogue: %s: HTTP %d", sku, resp.StatusCode)
	}
	var p Price
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return Price{}, err
	}
	return p, nil
}
