package main

import "github.com/dustin/go-broadcast"

var roomChannels = make(map[string]broadcast.Broadcaster)

func openListener(roomid string) chan any {
	listener := make(chan any)
	room(roomid).Register(listener)
	return listener
}

func closeListener(roomid string, listener chan any) {
	room(roomid).Unregister(listener)
	close(listener)
}

func room(roomid string) broadcast.Broadcaster {
	b, ok := roomChannels[roomid]
	if !ok {
		b = broadcast.NewBroadcaster(10)
		roomChannels[roomid] = b
	}
	return b
}
