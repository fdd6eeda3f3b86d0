package lab

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// RunDelay is the lab's stand-in for netem delay: it reads every packet routed
// into TUN device iface, holds it for delay, and writes it back, so the kernel
// forwards it on as if it had just arrived. R's policy routing sends forwarded
// traffic through the device once per direction. It runs until SIGTERM.
func RunDelay(iface string, delay time.Duration) error {
	fd, err := openTUN(iface)
	if err != nil {
		return err
	}
	defer unix.Close(fd)

	type held struct {
		due time.Time
		pkt []byte
	}
	// A constant delay keeps packets in arrival order, so a FIFO is the whole scheduler.
	queue := make(chan held, 1<<16)
	go func() {
		for h := range queue {
			// Sleeping per packet would cap the rate at the timer's resolution;
			// release anything due within half a millisecond at once instead.
			if d := time.Until(h.due); d > 500*time.Microsecond {
				time.Sleep(d)
			}
			_, _ = unix.Write(fd, h.pkt)
		}
	}()
	go readPackets(fd, func(pkt []byte) {
		select {
		case queue <- held{time.Now().Add(delay), append([]byte(nil), pkt...)}:
		default: // a full queue drops, like a full netem queue
		}
	})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return nil
}

// openTUN creates a layer-3 TUN device without packet information headers.
func openTUN(name string) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	var req [unix.IFNAMSIZ + 64]byte
	copy(req[:], name)
	*(*uint16)(unsafe.Pointer(&req[unix.IFNAMSIZ])) = unix.IFF_TUN | unix.IFF_NO_PI
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&req[0]))); errno != 0 {
		unix.Close(fd)
		return -1, fmt.Errorf("create TUN %s: %w", name, errno)
	}
	return fd, nil
}

// readPackets hands each packet read from TUN fd to handle (the buffer is
// reused: handle copies what it keeps) until the device goes away.
func readPackets(fd int, handle func(pkt []byte)) {
	buf := make([]byte, 65536)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			if err == unix.EINTR || err == unix.EAGAIN {
				continue
			}
			return
		}
		handle(buf[:n])
	}
}
