package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// errKubeletRestarted: the plugin's socket went away. A kubelet that
// starts removes every socket in the device-plugin folder and expects
// plugins to register again.
var errKubeletRestarted = errors.New("the plugin socket was removed (kubelet restarted)")

// serveOnce listens on dir/sock, registers resource with the kubelet
// (dir/kubelet.sock) and serves until ctx ends or the socket is removed.
func serveOnce(ctx context.Context, p *plugin, dir, sock string) error {
	path := filepath.Join(dir, sock)
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer srv.Stop()
	if err := register(ctx, filepath.Join(dir, "kubelet.sock"), sock, p.resource); err != nil {
		return err
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = os.Remove(path)
			return nil
		case err := <-served:
			return fmt.Errorf("serving %s: %w", path, err)
		case <-t.C:
			if _, err := os.Stat(path); err != nil {
				return errKubeletRestarted
			}
		}
	}
}

// register tells the kubelet where the plugin listens, bounded at 10 s.
func register(ctx context.Context, kubelet, sock, resource string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+kubelet, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: sock, ResourceName: resource,
		Options: &pluginapi.DevicePluginOptions{},
	})
	if err != nil {
		return fmt.Errorf("register %s with the kubelet at %s: %w", resource, kubelet, err)
	}
	return nil
}
