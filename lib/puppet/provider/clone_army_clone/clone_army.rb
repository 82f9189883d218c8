# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/helper'
require_relative '../../../puppet_x/clone_army/secrets'

Puppet::Type.type(:clone_army_clone).provide(:clone_army) do
  desc <<-DOC
    Manages clones with the `clone-army` helper. All clones are read with one
    `clone-army clone list` per run (prefetch); changes of base, master and
    certname are applied once per resource in `flush`.
  DOC

  confine kernel: 'Linux'

  mk_resource_methods

  # The properties this provider reads from one entry of `clone list`. A
  # master or certname the clone's puppet.conf lacks (null) is :absent.
  def self.from_helper(clone)
    {
      name: clone['name'],
      ensure: clone['state'].to_sym,
      base: clone['base'] || :absent,
      master: clone['master'] || :absent,
      certname: clone['certname'] || :absent,
    }
  end

  def self.instances
    PuppetX::CloneArmy::Helper.new.clone_list.map { |clone| new(from_helper(clone)) }
  end

  def self.prefetch(resources)
    clones = PuppetX::CloneArmy::Helper.for_resources(resources).clone_list
    clones.each do |clone|
      resource = resources[clone['name']]
      resource.provider = new(from_helper(clone)) if resource
    end
  end

  def initialize(value = {})
    super(value)
    @property_flush = {}
  end

  # :running, :stopped or :absent.
  def state
    @property_hash[:ensure] || :absent
  end

  def exists?
    state != :absent
  end

  def create(start:)
    missing = [:base, :master, :certname].select { |attribute| resource[attribute].nil? }
    unless missing.empty?
      raise Puppet::Error,
            "cannot create clone #{name}: #{missing.join(', ')} not given " \
            '(base, master and certname are all needed to create a clone)'
    end

    create_clone({ base: resource[:base], master: resource[:master], certname: resource[:certname] }, start)
    @property_flush = {}
  end

  def destroy
    helper.clone_remove(name)
    @property_hash = { name: name, ensure: :absent }
    @property_flush = {}
  end

  def start
    flush_changes
    return if state == :running

    update_from(helper.clone_start(name), :running)
  end

  def stop
    flush_changes
    return if state == :stopped

    update_from(helper.clone_stop(name), :stopped)
  end

  # Stop, then start: a refresh of a running clone (the helper has no
  # restart verb).
  def restart
    update_from(helper.clone_stop(name), :stopped)
    update_from(helper.clone_start(name), :running)
  end

  def base=(value)
    @property_flush[:base] = value
  end

  def master=(value)
    @property_flush[:master] = value
  end

  def certname=(value)
    @property_flush[:certname] = value
  end

  def flush
    flush_changes
  end

  # Applies pending base/master/certname changes: a new base recreates the
  # clone (started again if it was running and is not to be stopped); a new
  # master or certname re-points it in place. Called from flush, and by
  # start/stop so that a clone starts with its new configuration.
  def flush_changes
    return if @property_flush.empty? || !exists?

    if @property_flush.key?(:base)
      recreate
    else
      changes = @property_flush.slice(:master, :certname)
      clone = helper.clone_configure(name, **changes)
      @property_hash = clone ? self.class.from_helper(clone) : @property_hash.merge(changes)
    end
    @property_flush = {}
  end

  private

  def helper
    @helper ||= PuppetX::CloneArmy::Helper.new(resource && resource[:helper])
  end

  # Removes the clone and creates it again on the new base, keeping (or
  # applying) its master and certname.
  def recreate
    start_again = state == :running && resource[:ensure] != :stopped
    wanted = { base: @property_flush[:base], master: kept(:master), certname: kept(:certname) }
    unknown = wanted.select { |_, value| value.nil? }.keys
    unless unknown.empty?
      raise Puppet::Error,
            "cannot recreate clone #{name} on base #{wanted[:base]}: its #{unknown.join(', ')} " \
            "#{unknown.size == 1 ? 'is' : 'are'} unknown; give master and certname"
    end

    helper.clone_remove(name)
    @property_hash = { name: name, ensure: :absent }
    create_clone(wanted, start_again)
  end

  # The value of `attribute` a recreated clone gets: the new one, else the
  # current one (nil when neither is known).
  def kept(attribute)
    current = @property_hash[attribute]
    @property_flush[attribute] || resource[attribute] || (current unless current == :absent)
  end

  # Runs `clone create`; the helper may answer with the clone or its name.
  # The root password hash and challenge password go to the helper in files
  # of mode 0600 that exist only while it runs.
  def create_clone(wanted, start)
    secrets = { root_password_hash: resource[:root_password_hash], challenge_password: resource[:challenge_password] }
    clone = PuppetX::CloneArmy::Secrets.with_files(secrets) do |files|
      helper.clone_create(name, **wanted, start: start,
                                          root_password_hash_file: files[:root_password_hash],
                                          challenge_password_file: files[:challenge_password])
    end
    @property_hash = if clone
                       self.class.from_helper(clone)
                     else
                       { name: name, ensure: start ? :running : :stopped }.merge(wanted)
                     end
  end

  # Takes in the answer of `clone start|stop`: the clone as the helper
  # reports it, or (when it answers with names) the state just reached.
  def update_from(clones, reached)
    clone = clones.find { |entry| (entry.is_a?(Hash) ? entry['name'] : entry) == name }
    raise Puppet::Error, "clone-army did not report clone #{name} in its answer: #{clones.to_json}" unless clone

    @property_hash = clone.is_a?(Hash) ? self.class.from_helper(clone) : @property_hash.merge(ensure: reached)
  end
end
