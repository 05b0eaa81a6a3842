package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// plugin serves one extended resource (rdma/rxe) backed by one RDMA
// device that every pod given the resource shares, as the shared-device
// plugin's rdmaHcaMax does: the node advertises `shares` units, each pod
// asks for one, and each gets the same device files.
type plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	resource string
	shares   int
	find     func() (rdmaDevice, error) // reads sysfs again

	mu      sync.Mutex
	dev     rdmaDevice
	err     error         // why there is no device, when there is none
	changed chan struct{} // closed and replaced when dev or err changes
}

func newPlugin(resource string, shares int, find func() (rdmaDevice, error)) *plugin {
	p := &plugin{resource: resource, shares: shares, find: find, changed: make(chan struct{})}
	p.dev, p.err = find()
	return p
}

// devices is the list ListAndWatch sends: shares units, all Healthy while
// the device exists with its port ACTIVE, all Unhealthy otherwise (the
// kubelet then advertises 0 allocatable and pods stay Pending).
func (p *plugin) devices() ([]*pluginapi.Device, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	health := pluginapi.Healthy
	if p.err != nil || !p.dev.Active {
		health = pluginapi.Unhealthy
	}
	out := make([]*pluginapi.Device, p.shares)
	for i := range out {
		out[i] = &pluginapi.Device{ID: p.dev.Name + "-" + strconv.Itoa(i), Health: health}
	}
	return out, p.changed
}

// refresh reads sysfs again and wakes ListAndWatch when something changed.
func (p *plugin) refresh() {
	dev, err := p.find()
	p.mu.Lock()
	defer p.mu.Unlock()
	same := dev.Name == p.dev.Name && dev.Active == p.dev.Active && slices.Equal(dev.Files, p.dev.Files) &&
		(err == nil) == (p.err == nil)
	p.dev, p.err = dev, err
	if same {
		return
	}
	if err != nil {
		log.Printf("%s: unhealthy: %v", p.resource, err)
	} else {
		log.Printf("%s: %s on %s, port active %v, files %v", p.resource, dev.Name, dev.Netdev, dev.Active, dev.Files)
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// watch refreshes every interval until ctx ends.
func (p *plugin) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.refresh()
		}
	}
}

// GetDevicePluginOptions: no PreStartContainer, no preferred allocation.
func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the device list now and again on every change.
func (p *plugin) ListAndWatch(_ *pluginapi.Empty, s grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		devs, changed := p.devices()
		if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
			return err
		}
		select {
		case <-s.Context().Done():
			return nil
		case <-changed:
		}
	}
}

// Allocate gives each container the device files. A container asking for
// units this plugin never advertised, or asking while the device is gone,
// is refused: the kubelet then fails the pod with this message.
func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	p.mu.Lock()
	dev, derr := p.dev, p.err
	p.mu.Unlock()
	if derr != nil {
		return nil, fmt.Errorf("%s: %w", p.resource, derr)
	}
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.GetContainerRequests() {
		for _, id := range c.GetDevicesIds() {
			if !p.known(dev, id) {
				return nil, fmt.Errorf("%s: unknown device %q (this node has %s-0 … %s-%d)", p.resource, id, dev.Name, dev.Name, p.shares-1)
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{Devices: dev.specs()})
	}
	return resp, nil
}

func (p *plugin) known(dev rdmaDevice, id string) bool {
	for i := 0; i < p.shares; i++ {
		if id == dev.Name+"-"+strconv.Itoa(i) {
			return true
		}
	}
	return false
}

// GetPreferredAllocation is not offered (GetDevicePluginOptions says so).
func (p *plugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{}, nil
}

// PreStartContainer is not offered either.
func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
