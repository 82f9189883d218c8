# frozen_string_literal: true

require 'spec_helper'

describe Puppet::Type.type(:clone_army_base).provider(:clone_army) do
  include_context 'with a helper binary'

  let(:type) { Puppet::Type.type(:clone_army_base) }

  def base_resource(name, attributes = {})
    type.new({ name: name, helper: helper_path, provider: :clone_army }.merge(attributes))
  end

  describe '.instances' do
    before(:each) do
      allow(PuppetX::CloneArmy::Helper).to receive(:resolve_path).with(nil).and_return(helper_path)
    end

    it 'lists every base with one helper call' do
      expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
      instances = described_class.instances
      expect(instances.map(&:name)).to eq(['debian-12'])
      expect(instances.first.exists?).to be true
      expect(instances.first.get(:release)).to eq('bookworm')
    end

    it 'lists no bases' do
      expect_helper(['base', 'list', '--format', 'json'], 'base_list_empty.json')
      expect(described_class.instances).to eq([])
    end

    it 'fails on a protocol it does not speak' do
      expect_helper(['base', 'list', '--format', 'json'], 'protocol_99.json')
      expect { described_class.instances }.to raise_error(Puppet::Error, %r{protocol version 99})
    end
  end

  describe '.prefetch' do
    it 'reads all bases with one helper call' do
      resources = { 'debian-12' => base_resource('debian-12'), 'ubuntu-jammy' => base_resource('ubuntu-jammy') }
      expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
      described_class.prefetch(resources)
      expect(resources['debian-12'].provider.exists?).to be true
      expect(resources['ubuntu-jammy'].provider.exists?).to be false
    end

    it 'fails on malformed output instead of taking every base for absent' do
      expect_helper(['base', 'list', '--format', 'json'], 'malformed.txt', 101)
      expect { described_class.prefetch('debian-12' => base_resource('debian-12')) }
        .to raise_error(Puppet::Error, %r{clone-army base list --format json gave a malformed answer})
    end
  end

  describe '#create' do
    it 'builds the base with the host defaults' do
      resource = base_resource('debian-12')
      expect_helper(['base', 'create', '--', 'debian-12'], 'base_create.json')
      resource.provider.create
      expect(resource.provider.exists?).to be true
    end

    it 'says when the build starts and how long it took' do
      resource = base_resource('debian-12')
      expect_helper(['base', 'create', '--', 'debian-12'], 'base_create.json')
      notices = []
      allow(resource).to receive(:notice) { |message| notices << message }
      resource.provider.create
      expect(notices.size).to eq(2)
      expect(notices[0]).to match(%r{\Abuilding the base image})
      expect(notices[1]).to match(%r{\Abase image built in \d+ s\z})
    end

    it 'passes os, release, mirror and puppet_source' do
      resource = base_resource('ubuntu-jammy', os: 'ubuntu', release: 'jammy', mirror: 'http://mirror.example.com/ubuntu',
                                               puppet_source: 'distro')
      expect_helper(['base', 'create', '--os', 'ubuntu', '--release', 'jammy', '--mirror', 'http://mirror.example.com/ubuntu',
                     '--puppet-source', 'distro', '--', 'ubuntu-jammy'], 'base_create_ubuntu-jammy.json')
      resource.provider.create
      expect(resource.provider.exists?).to be true
    end

    ['puppet', 'openvox'].each do |source|
      it "passes puppet_source #{source}" do
        resource = base_resource('debian-12', puppet_source: source)
        expect_helper(['base', 'create', '--puppet-source', source, '--', 'debian-12'], 'base_create.json')
        resource.provider.create
      end
    end

    it 'passes puppet_source pe with the primary server and the CA certificate to verify it against' do
      resource = base_resource('debian-12', puppet_source: 'pe', server: 'puppet.example.com',
                                            pe_ca_cert: '/etc/puppetlabs/puppet/ssl/certs/ca.pem')
      expect_helper(['base', 'create', '--puppet-source', 'pe', '--server', 'puppet.example.com',
                     '--pe-ca-cert', '/etc/puppetlabs/puppet/ssl/certs/ca.pem', '--', 'debian-12'], 'base_create.json')
      resource.provider.create
    end

    it 'fails with the helper\'s error' do
      resource = base_resource('debian-12')
      expect_helper(['base', 'create', '--', 'debian-12'], 'error_usage.json', 2)
      expect { resource.provider.create }.to raise_error(Puppet::Error, %r{\[usage\]})
    end
  end

  describe '#destroy' do
    it 'removes the base' do
      resource = base_resource('debian-12', ensure: 'absent')
      expect_helper(['base', 'remove', '--', 'debian-12'], 'base_remove.json')
      resource.provider.destroy
      expect(resource.provider.exists?).to be false
    end

    it 'removes the clones queued for removal in the run first, with one call' do
      clones = Puppet::Type.type(:clone_army_clone)
      clone_provider = clones.provider(:clone_army)
      clone_provider.batch.removals.clear
      ['clone1', 'clone2'].each do |clone|
        clone_resource = clones.new(name: clone, ensure: 'absent', helper: helper_path, provider: :clone_army)
        clone_resource.provider = clone_provider.new(name: clone, ensure: :running)
        clone_resource.provider.destroy
      end
      resource = base_resource('debian-12', ensure: 'absent')
      expect_helper(['clone', 'remove', '--', 'clone1', 'clone2'], 'clone_remove_names.json')
      expect_helper(['base', 'remove', '--', 'debian-12'], 'base_remove.json')
      resource.provider.destroy
      expect(clone_provider.batch.removals).to eq([])
    end

    it 'reports a base still in use, naming the clones' do
      resource = base_resource('debian-12', ensure: 'absent')
      expect_helper(['base', 'remove', '--', 'debian-12'], 'base_remove_in_use.json', 1)
      expect { resource.provider.destroy }
        .to raise_error(Puppet::Error, %r{\[base-in-use\]: base "debian-12" is used by clones clone1, clone2})
    end
  end
end
