# frozen_string_literal: true

require 'json'
require_relative '../../../bench/lib/clone_army_bench/results'

describe CloneArmyBench::Results do
  results = File.expand_path('../../../bench/results', __dir__)

  it 'writes every committed result back byte for byte, JSON and table' do
    Dir.glob(File.join(results, '*.json')).each do |json|
      doc = JSON.parse(File.read(json))
      expect(described_class.json(doc)).to eq(File.read(json)), json
      expect(described_class.markdown(doc)).to eq(File.read(json.sub(%r{\.json\z}, '.md'))), json
    end
  end

  it 'makes a figure of the words given on the command line, a JSON number kept as written' do
    fig = described_class.figure_from_words(['k', 'label', '3.390', 's', '–', 'null'])
    expect(JSON.generate(fig)).to eq('{"key":"k","label":"label","value":3.39,"unit":"s","target":"–","met":null,"note":""}')
  end

  it 'refuses a value that is not a number, naming it' do
    expect { described_class.figure_from_words(['k', 'l', 'fast', 's', '–', 'null']) }.to raise_error(ArgumentError, %r{VALUE must be})
    expect { described_class.figure_from_words(['k', 'l', '"1"', 's', '–', 'null']) }.to raise_error(ArgumentError, %r{value must be})
  end

  it 'refuses a met that is not true, false or null' do
    expect { described_class.figure_from_words(['k', 'l', '1', 's', '–', '1']) }.to raise_error(ArgumentError, %r{met must be})
  end

  it 'shows a figure with no value as a dash and an unmet one in bold' do
    fig = described_class.figure(key: 'k', label: 'l', value: nil, unit: 's', target: '≤ 1', met: false, note: 'n')
    doc = described_class.document(started: 's', finished: 'f', status: 'partial', scale: { 'clones' => 4 }, figures: [fig])
    expect(described_class.markdown(doc)).to end_with("| l (n) | – | ≤ 1 | **no** |\n")
  end
end
