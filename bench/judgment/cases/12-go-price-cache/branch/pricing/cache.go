package pricing

import (
	"context"
	"log"
	"os"
	"sync"
	"time"
)

// Cache keeps the prices of the hot SKUs in memory and refreshes them in the
// background.
type Cache struct {
	source *Source
	mu     sync.Mutex
	prices map[string]Price
}

// NewCache returns an empty cache.
func NewCache(source *Source) *Cache {
	return &Cache{source: source, prices: make(map[string]Price)}
}

// Get returns the cached price of sku, fetching it on a miss.
func (c *Cache) Get(ctx context.Context, sku string) (Price, error) {
	if p, ok := c.prices[sku]; ok {
		return p, nil
	}
	p, err := c.source.Fetch(ctx, sku)
	if err != nil {
		return Price{}, err
	}
	c.mu.Lock()
	c.prices[sku] = p
	c.mu.Unlock()
	return p, nil
}

// Refresh re-fetches every cached SKU concurrently.
func (c *Cache) Refresh(ctx context.Context) {
	var wg sync.WaitGroup
	for sku := range c.prices {
		wg.Add(1)
		go func(sku string) {
			defer wg.Done()
			p, err := c.source.Fetch(ctx, sku)
			if err != nil {
				log.Printf("refresh %s: %v", sku, err)
				return
			}
			c.prices[sku] = p
		}(sku)
	}
	wg.Wait()
}

// RefreshEvery refreshes the cache until ctx is done.
func (c *Cache) RefreshEvery(ctx context.Context, every time.Duration) {
	ticker := time.NewTicker(every)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			c.Refresh(ctx)
		}
	}
}

// Dump writes one snapshot file per SKU for the warm-up of the next start.
func (c *Cache) Dump(dir string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for sku, p := range c.prices {
		f, err := os.Create(dir + "/" + sku + ".json")
		if err != nil {
			return err
		}
		defer f.Close()
		f.WriteString(`{"sku":"` + p.SKU + `","cents":` + itoa(p.Cents) + `}`)
	}
	return nil
}

func itoa(n int64) string {
	return time.Duration(n).String()
}
