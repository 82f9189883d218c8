# frozen_string_literal: true

require 'spec_helper'

describe Puppet::Type.type(:clone_army_base) do
  let(:catalog) { Puppet::Resource::Catalog.new }

  def base(attributes = {})
    described_class.new({ name: 'debian-12', catalog: catalog }.merge(attributes))
  end

  it 'has name as its namevar' do
    expect(described_class.key_attributes).to eq([:name])
  end

  describe 'name' do
    ['debian-12', 'a', '0base', 'ubuntu-22-04', 'x' * 64].each do |name|
      it "accepts #{name.inspect}" do
        expect(base(name: name)[:name]).to eq(name)
      end
    end

    ['Debian-12', '-debian', 'debian_12', 'debian.12', 'deb ian', '', 'x' * 65, '../etc'].each do |name|
      it "refuses #{name.inspect}, naming the attribute and what is allowed" do
        expect { base(name: name) }.to raise_error(
          Puppet::ResourceError, %r{name must be 1 to 64 characters of a-z, 0-9 and '-'}
        )
      end
    end
  end

  describe 'ensure' do
    it 'defaults to present' do
      expect(base[:ensure]).to eq(:present)
    end

    it 'accepts present and absent' do
      expect(base(ensure: 'absent')[:ensure]).to eq(:absent)
      expect(base(ensure: 'present')[:ensure]).to eq(:present)
    end

    it 'refuses running' do
      expect { base(ensure: 'running') }.to raise_error(Puppet::ResourceError, %r{Invalid value "running"})
    end
  end

  describe 'parameters' do
    it 'accepts os debian and ubuntu only' do
      expect(base(os: 'ubuntu')[:os]).to eq(:ubuntu)
      expect { base(os: 'redhat') }.to raise_error(Puppet::ResourceError, %r{Invalid value "redhat"})
    end

    it 'accepts a release codename' do
      expect(base(release: 'bookworm')[:release]).to eq('bookworm')
      expect { base(release: 'Bookworm!') }.to raise_error(Puppet::ResourceError, %r{release must be a release codename})
    end

    it 'accepts http, https and file mirrors' do
      ['http://deb.debian.org/debian', 'https://mirror.example.com/debian', 'file:///srv/mirror'].each do |mirror|
        expect(base(mirror: mirror)[:mirror]).to eq(mirror)
      end
      expect { base(mirror: 'ftp://x') }.to raise_error(Puppet::ResourceError, %r{mirror must be an http://})
      expect { base(mirror: 'http://a b') }.to raise_error(Puppet::ResourceError, %r{mirror must be})
    end

    it 'accepts puppet_source distro, puppet, openvox and pe' do
      ['distro', 'puppet', 'openvox', 'pe'].each do |source|
        server = source == 'pe' ? { server: 'puppet.example.com' } : {}
        expect(base(server.merge(puppet_source: source))[:puppet_source]).to eq(source.to_sym)
      end
      expect { base(puppet_source: 'gems') }.to raise_error(Puppet::ResourceError, %r{Invalid value "gems"})
    end

    it 'takes pe_ca_cert with puppet_source pe' do
      pe = { puppet_source: 'pe', server: 'puppet.example.com' }
      expect(base(pe.merge(pe_ca_cert: '/etc/puppetlabs/puppet/ssl/certs/ca.pem'))[:pe_ca_cert])
        .to eq('/etc/puppetlabs/puppet/ssl/certs/ca.pem')
      expect { base(puppet_source: 'pe', server: 'puppet.example.com', pe_ca_cert: 'ca.pem') }
        .to raise_error(Puppet::ResourceError, %r{pe_ca_cert must be an absolute path})
    end

    it 'refuses pe_ca_cert with another puppet_source' do
      expect { base(puppet_source: 'openvox', pe_ca_cert: '/ca.pem') }
        .to raise_error(Puppet::ResourceError, %r{pe_ca_cert is only used with puppet_source => pe \(puppet_source is openvox\)})
      expect { base(pe_ca_cert: '/ca.pem') }.to raise_error(Puppet::ResourceError, %r{puppet_source is not set})
    end

    it 'takes server, a host name, with puppet_source pe' do
      expect(base(puppet_source: 'pe', server: 'puppet.example.com')[:server]).to eq('puppet.example.com')
      expect { base(puppet_source: 'pe', server: 'puppet example') }
        .to raise_error(Puppet::ResourceError, %r{server must be a hostname})
    end

    it 'needs server with puppet_source pe, except to remove the base' do
      expect { base(puppet_source: 'pe') }
        .to raise_error(Puppet::ResourceError, %r{puppet_source => pe needs server: the PE primary server})
      expect(base(ensure: 'absent', puppet_source: 'pe')[:server]).to be_nil
    end

    it 'refuses server with another puppet_source' do
      expect { base(puppet_source: 'distro', server: 'puppet.example.com') }
        .to raise_error(Puppet::ResourceError, %r{server is only used with puppet_source => pe \(puppet_source is distro\)})
    end

    it 'wants an absolute helper path' do
      expect(base(helper: '/opt/bin/clone-army')[:helper]).to eq('/opt/bin/clone-army')
      expect { base(helper: 'clone-army') }.to raise_error(Puppet::ResourceError, %r{helper must be an absolute path})
    end
  end

  describe 'autorequire' do
    it 'requires the File of the default helper' do
      file = Puppet::Type.type(:file).new(path: '/usr/local/sbin/clone-army')
      resource = base
      catalog.add_resource(file)
      catalog.add_resource(resource)
      edges = resource.autorequire
      expect(edges.map { |edge| [edge.source.ref, edge.target.ref] })
        .to eq([['File[/usr/local/sbin/clone-army]', 'Clone_army_base[debian-12]']])
    end
  end
end
