// Package main checks a list of URLs concurrently and reports their status.
package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

type Result struct {
	URL    string
	Status int
	Err    error
}

type Report struct {
	mu       sync.Mutex
	byStatus map[int][]string
	failed   []string
}

func NewReport() *Report {
	return &Report{}
}

func (r *Report) Add(res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.Err != nil {
		r.failed = append(r.failed, res.URL)
		return
	}
	r.byStatus[res.Status] = append(r.byStatus[res.Status], res.URL)
}

func check(ctx context.Context, client *http.Client, url string) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return Result{URL: url, Err: err}
	}
	resp, err := client.Do(req)
	if err != nil {
		return Result{URL: url, Err: err}
	}
	resp.Body.Close()
	return Result{URL: url, Status: resp.StatusCode}
}

func checkAll(ctx context.Context, urls []string) *Report {
	client := &http.Client{Timeout: 10 * time.Second}
	report := NewReport()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			report.Add(check(ctx, client, u))
		}()
	}
	wg.Wait()
	return report
}

func printSummary(urls []string, report *Report) {
	statuses := make([]int, 0, len(report.byStatus))
	for s := range report.byStatus {
		statuses = append(statuses, s)
	}
	sort.Ints(statuses)
	for _, s := range statuses {
		fmt.Printf("%d: %d urls\n", s, len(report.byStatus[s]))
	}
	for i, u := range report.failed {
		func(n int, url string) {
			fmt.Printf("failed %d/%d: %s\n", n+1, len(report.failed), url)
		}(i, u)
	}
	fmt.Printf("checked %d urls\n", len(urls))
}

func readURLs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var urls []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		urls = append(urls, line)
	}
	return urls, sc.Err()
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: linkcheck URLS_FILE")
		os.Exit(2)
	}
	urls, err := readURLs(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	printSummary(urls, checkAll(ctx, urls))
}
