# frozen_string_literal: true

require 'openssl'
require_relative 'spec_helper_acceptance'

# Twins, end to end, from a directory of fact sets: the estate is the sandbox
# host itself, its facts as its own agent shows them (`puppet facts show`).
# Twins without noop are refused first, with nothing changed or imported.
# The class imports the directory in one apply, and at the next the fleet's
# clones become twins of that node. They get new certnames of their own that
# the server signs, they run in noop with the node's facts, and the server
# gets their reports. Where the suite has PuppetDB, it holds each twin's
# factset with the node's facts. There, the class then takes its node from
# that PuppetDB with a query instead: `exports => 'isolated'` is refused (the
# twins' server is the PuppetDB's host), and with `shared` the clones become
# twins of a node with a role in its certificate: a clone outside the fleet
# that asked for `pp_role` (`clone create --extension`), as a provisioned node
# does, and whose certificate the CA signed with it, on every suite. The twins
# ask for the same role, and PuppetDB shows it in their trusted data. Then the
# class without twins makes them plain clones again, as clone_army_spec.rb
# left them, for the specs after this, and the node is removed.
RSpec.describe 'a fleet of twins on a sandbox host' do
  clones = ['clone1', 'clone2'].freeze
  estate = '/srv/clone-army-estate'
  apply_timeout = 600
  checkin_timeout = 420
  # Puppet's registered OID of pp_role.
  pp_role_oid = '1.3.6.1.4.1.34380.1.1.13'

  let(:node) { @node }
  let(:twin_certnames) { clones.map { |clone| "#{clone}.#{@node_label}.#{host_certname}" } }

  # A node of the estate with a role, outside the fleet's clone<N> names.
  def role_node
    'prod1'
  end

  def role_certname
    "#{role_node}.estate.#{host_certname}"
  end

  # The extension's value in a signed certificate on the server: Puppet encodes
  # it as a DER UTF8String.
  def extension_in_certificate(certname, oid)
    pem = on_sandbox!('cat', "#{SandboxProbes::SIGNED_DIR}/#{certname}.pem", timeout: 30).stdout
    extension = OpenSSL::X509::Certificate.new(pem).extensions.find { |e| e.oid == oid }
    extension && OpenSSL::ASN1.decode(extension.value_der).value
  end

  def twins_manifest(count, twins)
    "class { 'clone_army': server => '#{SandboxHarness::SERVER}', runinterval => #{SandboxHarness::RUNINTERVAL}, " \
      "num_clones => #{count}, agent_noop => true, twins => #{twins} }"
  end

  before(:all) do
    script = <<~SH
      set -e
      rm -rf #{estate}
      mkdir -p #{estate}
      puppet facts show --render-as json > #{estate}/host.json
    SH
    on_sandbox!('sh', '-c', script, timeout: 120)
    facts = JSON.parse(on_sandbox!('cat', "#{estate}/host.json", timeout: 30).stdout)
    facts = facts['values'] if facts.key?('values')
    @node = facts['clientcert'] || facts.dig('networking', 'fqdn')
    @node_label = @node.split('.').first
    twins = "{ 'facts_dir' => '#{estate}', 'exports' => 'isolated' }"
    # Refused first: twins that would apply their nodes' catalogs.
    @before_refusal = clone_list.map { |c| c.values_at('name', 'certname', 'twin_of') }
    @without_noop = SandboxHarness.apply(twins_manifest(clones.size, twins).sub('agent_noop => true', 'agent_noop => false'),
                                         timeout: apply_timeout)
    @after_refusal = clone_list.map { |c| c.values_at('name', 'certname', 'twin_of') }
    @imported_after_refusal = on_sandbox('test', '-e', '/var/lib/puppet-clone-army/.twins/.source', timeout: 30)
    @import = SandboxHarness.apply(twins_manifest(clones.size, twins), timeout: apply_timeout)
    @imported = on_sandbox(SandboxHarness::HELPER, 'twin', 'list', timeout: 60)
    @since = sandbox_now
    @twinned = SandboxHarness.apply(twins_manifest(clones.size, twins), timeout: apply_timeout)

    # The node with a role, run in noop: its catalog is the site's, its role a
    # word in its certificate.
    @role_since = sandbox_now
    @role_created = on_sandbox(SandboxHarness::HELPER, 'clone', 'create', role_node, '--base', clone_list.first.fetch('base'),
                               '--server', SandboxHarness::SERVER, '--certname', role_certname,
                               '--run-mode', 'timer', '--runinterval', SandboxHarness::RUNINTERVAL.to_s,
                               '--agent-noop', 'true', '--extension', 'pp_role=web', '--start', timeout: 300)
  end

  after(:all) do
    # Back to the plain fleet clone_army_spec.rb left, without the node.
    SandboxHarness.apply(class_manifest(num_clones: clones.size), timeout: apply_timeout)
    on_sandbox(SandboxHarness::HELPER, 'clone', 'remove', role_node, timeout: 300)
    on_sandbox('rm', '-rf', estate, timeout: 60)
  end

  it 'refuses twins without noop, and changes nothing' do
    expect(@without_noop.exitstatus).to eq(1), @without_noop.to_s
    expect(@without_noop.output).to match(%r{twins run their nodes' own catalogs, so they run in noop}), @without_noop.to_s
    expect(@after_refusal).to eq(@before_refusal)
    expect(@imported_after_refusal.exitstatus).not_to eq(0), 'nothing was imported'
  end

  it 'imports the node in the first apply and leaves the fleet as it is' do
    expect([0, 2]).to include(@import.exitstatus), @import.to_s
    expect(@import.output).to match(%r{the twins' nodes are imported in this run}), @import.to_s
    listed = JSON.parse(@imported.stdout).fetch('result')
    expect(listed['identities'].map { |i| i['node'] }).to eq([node])
    expect(listed['imported_from']).to eq('facts_dir' => estate)
  end

  it 'makes every clone a twin of the node under a certname of its own in the next' do
    expect(@twinned.exitstatus).to eq(2), @twinned.to_s
    listed = clone_list.to_h { |c| [c['name'], c] }
    clones.zip(twin_certnames).each do |clone, certname|
      expect(listed[clone]).to include('twin_of' => node, 'certname' => certname, 'agent_noop' => true),
                               "#{clone}: #{listed[clone].inspect}\n#{diagnostics}"
    end
  end

  it 'has the server sign each twin and take its noop runs' do
    missing = wait_for_checkins(twin_certnames, @since, timeout: checkin_timeout)
    expect(missing).to eq([]), "no signed certificate or report from #{missing.join(', ')}\n#{diagnostics}"
  end

  it 'gives the twins the node\'s facts, which the server stores for them' do
    skip 'the suite has no PuppetDB; the twin\'s facts are read in the clone instead' unless puppetdb?

    factsets = puppetdb_query('factsets')
    twin_certnames.each do |certname|
      factset = factsets.find { |f| f['certname'] == certname }
      expect(factset).not_to be_nil, "PuppetDB has no factset of #{certname}"
      facts = factset.dig('facts', 'data').to_h { |fact| [fact['name'], fact['value']] }
      expect(facts['clone_army_twin_of']).to eq(node)
      expect(facts.dig('networking', 'fqdn')).to eq(@node), facts['networking'].inspect
    end
  end

  # What the agent sends, as Puppet resolves it in the clone (`facter -p
  # networking.fqdn` asks for Facter's own dotted fact, which the node's
  # external `networking` does not replace; the facts Puppet sends take it).
  it 'gives each twin the node\'s facts in the clone, as its agent sends them' do
    clones.each do |clone|
      result = in_clone(clone, 'puppet', 'facts', 'show', '--render-as', 'json', timeout: 180)
      expect(result.exitstatus).to eq(0), result.to_s
      facts = JSON.parse(result.stdout)
      facts = facts['values'] if facts.key?('values')
      expect(facts['clone_army_twin_of']).to eq(node)
      expect(facts.dig('networking', 'fqdn')).to eq(@node), facts['networking'].inspect
    end
  end

  it 'has the CA sign a clone\'s requested role into its certificate' do
    expect(@role_created.exitstatus).to eq(0), @role_created.to_s
    missing = wait_for_checkins([role_certname], @role_since, timeout: checkin_timeout)
    expect(missing).to eq([]), "no signed certificate or report from #{role_certname}\n#{diagnostics}"
    expect(extension_in_certificate(role_certname, pp_role_oid)).to eq('web')
  end

  context 'from the server\'s own PuppetDB' do
    let(:pdb_node) { role_certname }
    let(:pdb_certnames) { clones.map { |clone| "#{clone}.#{role_node}.#{host_certname}" } }

    before(:all) do
      skip 'the suite has no PuppetDB' unless puppetdb?

      # A node of the estate: the node with a role, once it has checked in and
      # PuppetDB holds its facts.
      node = role_certname
      wait_for(timeout: checkin_timeout, interval: 5) do
        @node_facts = puppetdb_query('factsets').find { |f| f['certname'] == node }
      end
      query = %(inventory[certname, environment, facts, trusted] { certname = "#{node}" })
      # The server's own certificate, as puppetdb_query presents it: the host's
      # ssldir holds more than one key by now, and the helper does not guess.
      ssl = '/var/lib/puppet/ssl'
      source = "'puppetdb' => 'https://#{SandboxHarness::SERVER}:8081', 'query' => '#{query}', " \
               "'client_cert' => '#{ssl}/certs/#{SandboxHarness::SERVER}.pem', " \
               "'client_key' => '#{ssl}/private_keys/#{SandboxHarness::SERVER}.pem'"
      @isolated = SandboxHarness.apply(twins_manifest(clones.size, "{ #{source}, 'exports' => 'isolated' }"),
                                       timeout: apply_timeout)
      shared = twins_manifest(clones.size, "{ #{source}, 'exports' => 'shared' }")
      @import_pdb = SandboxHarness.apply(shared, timeout: apply_timeout)
      @since_pdb = sandbox_now
      @twinned_pdb = SandboxHarness.apply(shared, timeout: apply_timeout)
    end

    it 'refuses isolated exports from the twins\' own server\'s PuppetDB, and changes nothing' do
      expect(@isolated.exitstatus).to eq(1), @isolated.to_s
      expect(@isolated.output).to match(%r{is the host of the PuppetDB the nodes come from}), @isolated.to_s
    end

    it 'imports the queried node, and makes the clones its twins at the next apply' do
      expect(@import_pdb.exitstatus).to eq(2), @import_pdb.to_s
      expect(@twinned_pdb.exitstatus).to eq(2), @twinned_pdb.to_s
      listed = clone_list.to_h { |c| [c['name'], c] }
      clones.zip(pdb_certnames).each do |clone, certname|
        expect(listed[clone]).to include('twin_of' => pdb_node, 'certname' => certname),
                                 "#{clone}: #{listed[clone].inspect}\n#{diagnostics}"
      end
    end

    it 'has the twins check in with the queried node\'s facts' do
      expect(@node_facts).not_to be_nil, "PuppetDB had no factset of #{pdb_node}"
      missing = wait_for_checkins(pdb_certnames, @since_pdb, timeout: checkin_timeout)
      expect(missing).to eq([]), "no signed certificate or report from #{missing.join(', ')}\n#{diagnostics}"
      node_fqdn = @node_facts.dig('facts', 'data').find { |fact| fact['name'] == 'networking' }&.dig('value', 'fqdn')
      factsets = puppetdb_query('factsets')
      pdb_certnames.each do |certname|
        facts = factsets.find { |f| f['certname'] == certname }&.dig('facts', 'data').to_a
                        .to_h { |fact| [fact['name'], fact['value']] }
        expect(facts['clone_army_twin_of']).to eq(pdb_node), "#{certname}: #{facts.keys.sort.inspect}"
        expect(facts.dig('networking', 'fqdn')).to eq(node_fqdn)
      end
    end

    it 'gives the twins the node\'s role, through their certificates to PuppetDB' do
      pdb_certnames.each do |certname|
        expect(extension_in_certificate(certname, pp_role_oid)).to eq('web')
      end
      inventory = puppetdb_query('inventory').to_h { |node| [node['certname'], node] }
      expect(inventory.dig(pdb_node, 'trusted', 'extensions', 'pp_role')).to eq('web')
      pdb_certnames.each do |certname|
        role = inventory.dig(certname, 'trusted', 'extensions', 'pp_role')
        expect(role).to eq('web'), inventory[certname].inspect
      end
    end
  end
end
