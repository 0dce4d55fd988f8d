module example.com/netdiag

go 1.22
