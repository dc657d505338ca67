module example.com/wholesuite

go 1.24
