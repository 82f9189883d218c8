# frozen_string_literal: true

require 'spec_helper'
require 'json'
require 'puppet_x/clone_army/twins'

describe PuppetX::CloneArmy::Twins do
  let(:schema_rule) { PuppetX::CloneArmy::Schema.fetch('names', 'twin_node') }

  describe '.validate_node' do
    it 'takes the node names the helper takes and refuses the others, naming the attribute' do
      schema_rule['valid'].each { |name| expect { described_class.validate_node('twin', name) }.not_to raise_error }
      schema_rule['invalid'].each do |name|
        expect { described_class.validate_node('twin', name) }.to raise_error(ArgumentError, %r{\Atwin must be a certname})
      end
      expect(described_class.node?('a' * schema_rule['max_length'])).to be(true)
      expect(described_class.node?('a' * (schema_rule['max_length'] + 1))).to be(false)
    end
  end

  describe '.file' do
    it 'is the node\'s record in the helper\'s twins directory, and never a path of the caller\'s' do
      expect(described_class.file('web01.example.com')).to eq('/var/lib/puppet-clone-army/.twins/web01.example.com.json')
      expect { described_class.file('../etc/passwd') }.to raise_error(ArgumentError)
    end
  end

  describe '.validate_source' do
    it 'takes a directory, or a PuppetDB with its query' do
      expect { described_class.validate_source('facts_dir' => '/srv/estate') }.not_to raise_error
      expect { described_class.validate_source(puppetdb: 'db', query: 'q') }.not_to raise_error
    end

    [
      {}, { 'facts_dir' => 'relative' }, { 'facts_dir' => '' }, { 'puppetdb' => 'db' },
      { 'facts_dir' => '/a', 'query' => 'q' }, { 'puppetdb' => 'db', 'query' => 3 }, 'facts_dir'
    ].each do |bad|
      it "refuses #{bad.inspect}" do
        expect { described_class.validate_source(bad) }.to raise_error(ArgumentError, %r{source})
      end
    end
  end

  describe '.source_of' do
    it 'is the facts_dir, or the PuppetDB and its query, without what else the class takes' do
      expect(described_class.source_of({ 'facts_dir' => '/srv/estate', 'exports' => 'isolated', 'assign' => 'mix' }, 'test'))
        .to eq('facts_dir' => '/srv/estate')
      twins = { 'puppetdb' => 'db.example.com', 'query' => 'q', 'client_key' => '/k.pem', 'exports' => 'isolated' }
      expect(described_class.source_of(twins, 'puppet-test.example.com')).to eq('puppetdb' => 'db.example.com', 'query' => 'q')
    end

    {
      'both sources' => [{ 'facts_dir' => '/a', 'puppetdb' => 'db', 'query' => 'q' }, %r{give one of the two}],
      'neither' => [{ 'exports' => 'shared' }, %r{give one of the two; got exports}],
      'a PuppetDB without its query' => [{ 'puppetdb' => 'db' }, %r{give one of the two}],
      'a query alone' => [{ 'query' => 'q' }, %r{give one of the two}],
      'TLS files beside a directory' => [{ 'facts_dir' => '/a', 'ca_cert' => '/c', 'client_key' => '/k' },
                                         %r{ca_cert, client_key are for `puppetdb` only}],
      'a relative directory' => [{ 'facts_dir' => 'estate' }, %r{absolute path}],
    }.each do |what, (twins, message)|
      it "refuses #{what}" do
        expect { described_class.source_of(twins.merge('exports' => 'shared'), 'test') }.to raise_error(ArgumentError, message)
      end
    end

    it 'refuses isolated exports when the twins\' server is the PuppetDB\'s host, however the address is written' do
      ['https://PuppetDB.example.com:8081', 'puppetdb.example.com', 'https://puppetdb.example.com/',
       'puppetdb.example.com:8081'].each do |address|
        twins = { 'puppetdb' => address, 'query' => 'q', 'exports' => 'isolated' }
        expect { described_class.source_of(twins, 'puppetdb.EXAMPLE.com') }
          .to raise_error(ArgumentError, %r{the twins' server puppetdb.EXAMPLE.com is the host of the PuppetDB}), address
        expect(described_class.source_of(twins.merge('exports' => 'shared'), 'puppetdb.example.com')).to include('puppetdb' => address)
        expect(described_class.source_of(twins, 'puppet-test.example.com')).to include('puppetdb' => address)
      end
    end
  end

  describe '.fact' do
    it 'keeps of `twin list` what the class deals and checks the twins by' do
      list = JSON.parse(File.read(File.join(__dir__, '../../../fixtures/helper/generated/twin_list.json')))['result']
      fact = described_class.fact(list)
      expect(fact['total']).to eq(3)
      expect(fact['nodes']['web01.example.com']).to eq('os_family' => 'Debian', 'role' => 'web', 'environment' => 'production')
      expect(fact['imported_from']).to eq('facts_dir' => '/srv/estate')
    end
  end

  describe '.assign' do
    let(:nodes) do
      { 'w1' => { 'role' => 'web' }, 'w2' => { 'role' => 'web' }, 'w3' => { 'role' => 'web' },
        'd1' => { 'role' => 'db' }, 'x1' => {} }
    end

    it 'deals round robin in name order, again from the first' do
      expect(described_class.assign(nodes, 7, 'round_robin')).to eq(['d1', 'w1', 'w2', 'w3', 'x1', 'd1', 'w1'])
    end

    it 'mixes so that the first clones hold the roles in the estate\'s proportions, and every node has one in a full round' do
      dealt = described_class.assign(nodes, 5, 'mix')
      expect(dealt.sort).to eq(nodes.keys.sort)
      roles = described_class.assign(nodes, 3, 'mix').map { |node| nodes[node]['role'] }
      expect(roles.count('web')).to eq(2)
    end

    it 'deals nothing to no clone, and nothing of no node' do
      expect(described_class.assign(nodes, 0, 'mix')).to eq([])
      expect(described_class.assign({}, 3, 'round_robin')).to eq([])
    end

    it 'refuses another way, naming the allowed ones' do
      expect { described_class.assign(nodes, 1, 'random') }.to raise_error(ArgumentError, %r{round_robin, mix})
    end
  end

  describe '.certname' do
    it 'holds the node\'s first label under the clone, or before it' do
      expect(described_class.certname('clone3', 'web01.example.com', 'load.example.com', 'clone'))
        .to eq('clone3.web01.load.example.com')
      expect(described_class.certname('clone3', 'web01.example.com', 'load.example.com', 'node_prefix'))
        .to eq('web01-clone3.load.example.com')
    end

    it 'changes with the node, so that a clone never keeps another node\'s certificate' do
      names = ['web01.a.com', 'web02.a.com', 'db01.a.com'].map { |node| described_class.certname('clone1', node, 'h', 'clone') }
      expect(names.uniq.size).to eq(3)
    end

    it 'makes a hostname of any certname: "_" to "-", a label cut to 63, no "-" at either end' do
      valid = PuppetX::CloneArmy::Names::HOSTNAME
      ['_db_1.example.com', 'a' * 250, 'x_'].each do |node|
        ['clone', 'node_prefix'].each do |scheme|
          name = described_class.certname('clone12', node, 'load.example.com', scheme)
          expect(name).to match(valid)
          expect(name.split('.').map(&:length).max).to be <= 63
        end
      end
      expect(described_class.label('_db_1.example.com')).to eq('db-1')
    end

    it 'takes its label length from the schema\'s hostname rule' do
      expect(described_class::LABEL_MAX_LENGTH).to eq(63)
    end

    it 'refuses a clone name that leaves no room for the node\'s label before it' do
      expect { described_class.certname('c' * 62, 'web01.example.com', 'load.example.com', 'node_prefix') }
        .to raise_error(ArgumentError, %r{leaves no room})
    end

    it 'refuses another scheme, naming the allowed ones' do
      expect { described_class.certname('clone1', 'web01', 'h', 'node') }.to raise_error(ArgumentError, %r{clone, node_prefix})
    end
  end
end
