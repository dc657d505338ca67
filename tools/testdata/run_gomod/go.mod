module example.com/runfix

go 1.22
