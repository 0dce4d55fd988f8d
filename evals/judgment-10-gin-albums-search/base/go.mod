module example.com/albums

go 1.22

require (
	github.com/gin-gonic/gin v1.10.0
	github.com/lib/pq v1.10.9
)
