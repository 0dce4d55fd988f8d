module github.com/example/pricing

go 1.22
